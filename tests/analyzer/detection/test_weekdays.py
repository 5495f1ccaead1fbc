"""analyzer.detection.weekdays: a weekday alone after "today" in other languages is today's date; not
after a condition, not a span of days, not in an example."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Heute ist Donnerstag.", "Donnerstag"),
        ("Hoy es jueves.", "jueves"),
        ("Aujourd'hui nous sommes jeudi.", "jeudi"),
        ("Сегодня четверг.", "четверг"),
        ("今天是星期四。", "星期四"),
        ("今日は木曜日です。", "木曜日"),
        ("오늘은 목요일입니다.", "목요일"),
    ],
)
def test_a_weekday_after_today_in_other_languages(text, day):
    assert [v.value for v in find_volatile(text)] == [day]


@pytest.mark.parametrize(
    "text",
    [
        "Wenn heute Montag ist, dann sag Hallo.",  # a condition
        "Ich arbeite heute Montag bis Freitag.",  # a span of days
        "Beispiel: Heute ist Montag.",  # an example
        "Hoy es un buen día.",  # no weekday
        "Die Heutemontag-Aktion läuft.",  # inside a word
    ],
)
def test_no_weekday_after_a_condition_a_span_an_example_or_none(text):
    assert [v for v in find_volatile(text) if v.kind == "date"] == []
