"""analyzer.detection.fromtoday: an age, a countdown, the days until or since a date are counted
from today and change as the calendar turns; a stated age, a duration setting or a day count of a
fixed period is not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.names import judge_expression


@pytest.mark.parametrize(
    "expr",
    ["age(2010, 6, 28)", "calculate_age(user.birthday)", "countdown", "date_countdown(6, 28)"]
    + ["days_until_launch", "daysSinceSignup", "years_since(founded)", "DAYS_LEFT", "time_ago(post.created)"]
    + ["next_wednesday", "lastMonday", "this_friday", "coming_weekend"],
)
def test_values_counted_from_today(expr):
    assert "counted from today's date" in judge_expression(expr).reason


@pytest.mark.parametrize(
    "expr",
    ["age", "user_age_group", "max_days", "retention_days", "average", "page", "wednesday", "friday_hours"],
)
def test_a_stated_age_or_a_duration_is_not(expr):
    v = judge_expression(expr)
    assert v is None or "counted from today" not in v.reason


@pytest.mark.parametrize(
    "slot", ["{{age(2010, 6, 28)}}", "{{ countdown }}", "{days_until_birthday}", "${daysLeft}"]
)
def test_a_character_sheets_age_and_countdown_slots_are_found(slot):
    text = f"# 角色\n- 年龄：{slot}\n- 生日：2010-6-28 (fixed)\n"
    assert [v.value for v in find_volatile(text)] == [slot]


def test_a_written_age_is_fixed_text():
    assert find_volatile("# 角色\n- 年龄：16岁\n- Age: {age}\n") == []
