"""proxy.bench.rewrite_render: a labelled value rendered as a live app renders it a day or a minute on."""

from __future__ import annotations

import pytest

from proxy.bench.rewrite_render import render


@pytest.mark.parametrize(
    ("value", "later"),
    [
        ("2025-04-24", "2025-04-25"),
        ("Thursday, 24 April 2025", "Friday, 25 April 2025"),
        ("4/26/2025, 1:52:03 PM", "4/27/2025, 1:53:03 PM"),
        ("24/04/2025", "25/04/2025"),
        ("2025年4月24日 星期四", "2025年4月25日 星期五"),
        ("2025년 4월 24일 목요일", "2025년 4월 25일 금요일"),
        ("jueves, 24 de abril de 2025", "viernes, 25 de abril de 2025"),
        ("24 апреля 2025 г., четверг", "25 апреля 2025 г., пятница"),
        ("09:58 AM on January 10, 2025", "09:59 AM on January 11, 2025"),
        ("February 28, 2025", "February 27, 2025"),  # back a day where the month ends
        ("48,213", "59,324"),
    ],
)
def test_dates_a_day_on_and_times_a_minute_on_in_their_own_format(value, later):
    assert render(value, 0) == value and render(value, 1) == later


def test_slots_are_filled_by_what_their_name_or_label_says_and_differ_between_renderings():
    assert render("{{CURRENT_DATE}}", 0) == "Thursday, April 24, 2025"
    assert render("{tokens_left}", 0) != render("{tokens_left}", 1)
    assert render("{}", 0, "The current date is ") == "Thursday, April 24, 2025"
    assert render("%Y-%m-%d", 1) == "2025-04-25"
    assert render("main", 1) != "main"
