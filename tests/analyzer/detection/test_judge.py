"""analyzer.detection.judge: rules of the judge not tied to one shape (repeats of a kept slot)."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def slots(text: str) -> list[str]:
    return [v.reason for v in find_volatile(text) if v.kind == "placeholder"]


def test_a_kept_slot_again_is_found_again():
    assert slots("Current date: {d}\nPlan the week from {d} on.\n") == [
        "follows `Current date`",
        "the same slot as `d` before",
    ]


def test_a_kept_slot_again_inside_an_example_is_rendered_there_too():
    text = (
        "Current date: {d}\n\nExample:\nUser: what day is it?\nAssistant: It is {d}.\n\n"
        "Few-shot examples:\n<example>Today is {d}</example>\nAnswer as in e.g. {d}.\n"
    )
    assert slots(text) == ["follows `Current date`"] + ["the same slot as `d` before"] * 3
    # an example's value written out is fixed text all the same
    assert slots("Current date: {d}\n\nExample:\nAssistant: It is 2025-03-03.\n") == [
        "follows `Current date`"
    ]


def test_a_relative_day_carries_its_date_even_after_an_eg():
    text = 'You resolve dates (e.g. "yesterday" is Monday, March 3, 2025) before answering.'
    assert [v.value for v in find_volatile(text) if v.kind == "date"] == ["Monday, March 3, 2025"]
    assert find_volatile("Write dates like this, e.g. 2025-03-03.") == []
    assert find_volatile("Example:\nyesterday was 2025-03-03\n") == []


def test_a_kept_slot_again_inside_a_fence_is_rendered_there_too():
    text = 'Greet {{FirstName}} first.\n\n### Flow:\n```\nAssistant: "Sure, {{FirstName}}. Which day?"\n```\n'
    assert slots(text) == [
        "named `FirstName`: the person's own name, per user",
        "the same slot as `FirstName` before",
    ]
    # a slot shown only in code, never rendered in prose, stays code
    assert slots("Use this syntax:\n```\nHello {{FirstName}}\n```\nThen go on.\n") == []


def test_a_kept_slot_of_another_engine_or_in_a_raw_block_or_a_comment_is_not_filled():
    mixed = 'Current date: {{ current_date }}\n\n```python\nreturn f"Today is {current_date}"\n```\n'
    assert slots(mixed) == ["named `current_date`: today's date"]  # Jinja leaves single braces alone
    raw = "{% raw %}\nUse {{ current_date }} in templates\n{% endraw %}\nCurrent date: {{ current_date }}\n"
    assert slots(raw) == ["named `current_date`: today's date"]
    assert slots(raw.replace("{% raw %}", "{%- raw -%}").replace("{% endraw %}", "{%- endraw -%}")) == slots(
        raw
    )
    comment = "Current date: {{ current_date }}\n{# was: {{ current_date }} #}\n"
    assert slots(comment) == ["named `current_date`: today's date"]


@pytest.mark.parametrize(
    "text",
    [
        "Se agora são 15:26, NÃO mostre 8h, 9h ou 10h.",
        "If the current time is 14:00, greet with good afternoon.",
        "Si hoy es 2025-04-24, di hola.",
        "Wenn es jetzt 14:00 Uhr ist, sag guten Tag.",
    ],
)
def test_a_now_value_a_condition_supposes_is_no_reading(text):
    assert [v for v in find_volatile(text) if v.kind in ("time", "date")] == [], text


@pytest.mark.parametrize(
    "text", ["If needed, the current time is 14:05.", "Agora são 15:26.", "Current time: 14:00"]
)
def test_a_now_value_after_a_closed_condition_or_none_is_read(text):
    assert [v.kind for v in find_volatile(text) if v.kind in ("time", "date")] == ["time"], text


@pytest.mark.parametrize(
    "text",
    ["Lembre-se que agora são 15:26.", "Attualmente si sono fatte le 15:42", "What if\nCurrent time: 14:00"],
)
def test_a_pronoun_or_a_condition_on_another_line_supposes_nothing(text):
    assert [v.kind for v in find_volatile(text) if v.kind in ("time", "date")] == ["time"], text
