"""Nameless slots under reading labels: counts and state the session keeps, not limits."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def _slots(text: str) -> list[str]:
    return [text[v.start : v.end] for v in find_volatile(text, context="prompt") if v.kind == "placeholder"]


@pytest.mark.parametrize(
    "text",
    [
        "Messages so far: {_____}",
        "Tokens used: {___}",
        "Cost so far: {___}",
        "Memory usage: {___}",
        "Free memory: {__}",
        "Battery: {__}%",
        "Elapsed: {___}",
        "Context window used: {___}%",
        "Message count: {___}",
        "Tokens left: {__}",
        "You have {__} requests left today.",
        "State: {____}",
        "Current state:\n{______}",
    ],
)
def test_a_slot_under_a_reading_label_is_found(text):
    assert _slots(text) == [text[text.index("{") : text.index("}") + 1]]


@pytest.mark.parametrize(
    "text",
    [
        "Max tokens: {__}",
        "Write {__} words.",
        "Return {__} results.",
        "Number of results: {__}",
        "Word count: {__}",
        "Open tabs: {___}",
        "Use at most {___} tokens left in the budget.",
        "Some text.\n{____}",
    ],
)
def test_a_limit_a_setting_or_content_is_not(text):
    assert _slots(text) == []


def test_a_step_counted_against_its_total():
    assert _slots("Step {x} of {n}.") == ["{x}"] and _slots("Attempt {k} of 5") == ["{k}"]
    assert _slots("Iteration {i}/{n}") == ["{i}"]
    assert _slots("Go to step {x} of the guide.") == [] and _slots("Max steps: {x}") == []
