"""analyzer.detection.glossary: a time restating a quoted phrase's number is an illustration."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.glossary import restates_quote


def test_a_time_after_the_mapping_of_a_quoted_phrase_with_a_number():
    text = (
        'Read these phrases:\n\n- "mañana a las 10am" = día siguiente a la fecha actual, a las 10:00 a.m.\n'
    )
    assert restates_quote(text, text.index("10:00"))
    assert find_volatile(text) == []
    arrow = '1. "at 3pm" → today at 15:00\n'
    assert restates_quote(arrow, arrow.index("15:00"))


def test_a_phrase_without_a_number_or_a_time_before_the_mapping_is_not_one():
    today = '- "today" = 2026-11-30\n'
    assert not restates_quote(today, today.index("2026"))
    assert [v.value for v in find_volatile(today)] == ["2026-11-30"]
    plain = "Current time: 10:00 a.m.\n"
    assert not restates_quote(plain, plain.index("10:00"))
    assert [v.value for v in find_volatile(plain) if v.kind == "time"] == ["10:00 a.m."]
