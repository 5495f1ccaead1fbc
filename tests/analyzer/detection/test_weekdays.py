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


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Today: Thursday\n", "Thursday"),  # "Today" as a label, in English
        ("- **Today**: Thursday\n", "Thursday"),
        ("TODAY (Thursday):\n- plan the week\n", "Thursday"),
        ("Current day: Thursday\n", "Thursday"),
    ],
)
def test_a_weekday_under_an_english_today_label(text, day):
    assert [v.value for v in find_volatile(text) if v.kind == "date"] == [day]


@pytest.mark.parametrize(
    "text",
    [
        "Plan for today: 3 tasks\n",  # "today" inside a sentence is no label
        "today(3)\n",  # a call
        "Today: we discuss plans.\n",  # no value
    ],
)
def test_no_today_label_inside_a_sentence_a_call_or_without_a_value(text):
    assert [v for v in find_volatile(text) if v.kind in ("date", "today-phrase")] == []


def test_a_weekday_alone_does_not_repeat():
    text = "Today: Thursday\n\nExample reply: Thursday works for me.\n"
    assert [v.value for v in find_volatile(text) if v.kind == "date"] == ["Thursday"]
