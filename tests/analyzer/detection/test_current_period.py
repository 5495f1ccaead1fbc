"""analyzer.detection.current_period: the current year or month under a label that says so, found and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def dates(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind == "date"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The current year is 2025.", "2025"),
        ("Current month: April 2025", "April 2025"),
        ("It is currently April 2025.", "April 2025"),
        ("当前年份：2025年", "2025年"),
        ("今年は2025年です。", "2025年"),
        ("Aktuelles Jahr: 2025", "2025"),
        ("Mes actual: abril 2025", "abril 2025"),
        ("当前月份：2025年4月", "2025年4月"),
        ("올해는 2025년 4월입니다.", "2025년 4월"),
        ("It is now the year 2025.", "2025"),
        ("We're now in 2025.", "2025"),
        ("The year is now 2025.", "2025"),
    ],
)
def test_the_current_year_or_month_is_found(text, value):
    assert dates(text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "Since 2025 we ship weekly.",
        "© 2025 Example Inc.",
        "Your knowledge cutoff year is 2023.",
        "For example, the current year is 2030 in this story.",
        "Our fiscal year ends in April.",
        "Set the scene: the year is 1920, Paris.",
        "The year is 1984. Big Brother is watching.",
        "For this story the current year is 1920.",
        "We are in 3 countries since 2015.",
    ],
)
def test_a_year_the_label_does_not_make_current_is_not(text):
    assert dates(text) == []


def test_the_word_check_leaves_out_no_ascii_window_the_label_regex_matches():
    from analyzer.detection.current_period import _BEFORE, _WORDS

    labels = (
        "current year is",
        "This month is",
        "it is currently",
        "We are currently in",
        "we are in the year",
        "It's now",
        "we're in",
        "the year is now",
    )
    labels += (
        "Aktuelles Jahr:",
        "das Jahr ist",
        "nous sommes en",
        "Ano atual:",
        "anno corrente",
        "estamos en",
    )
    for label in labels:
        for gap in (" ", "  ", ": ", " **"):
            window = label + gap
            if _BEFORE.search(window):
                assert any(w in window.lower() for w in _WORDS), window


def test_a_month_name_alone_under_a_current_month_label():
    for text in ("Current month: November", "The current month is November.", "We are currently in May."):
        assert [v.value for v in find_volatile(text)] == [text.rstrip(".").split()[-1]]
    for text in ("We are in May, so plan ahead.", "May I help you?", "Example: Current month: May"):
        assert find_volatile(text) == []


def test_a_bold_label_of_the_current_year_or_month():
    text = "**Current Month**: November 2025\n**Current Year**: 2025\n__Current month__: November\n"
    assert [v.value for v in find_volatile(text)] == ["November 2025", "2025", "November"]
