"""Cases a review of round 10 found: each rule's reach, both ways (found / not found)."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def values(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind != "today-phrase"]


@pytest.mark.parametrize(
    "text",
    [
        "Persona memory:\n{memory}\n\nRemember previous memories are not shown.",  # the words come after it
        "Your memory of this user:\n{memory}\n\nDo not rewrite your memory.",
        "Update the chat memory daily.\n"
        + "Answer briefly. " * 50
        + "\nCore memory:\n{memory}\n",  # far above
    ],
)
def test_a_kept_memory_block_is_not_a_memory_tasks_material(text):
    assert "{memory}" in values(text)


def test_a_memory_update_prompt_reads_its_memory_slot_as_material():
    text = "You maintain the bot's persona. Update the persona only if it mismatches.\n\nRecent chat memory:\n{chat_memory}\n"
    assert values(text) == []


@pytest.mark.parametrize(
    "text",
    ["Return a JSON object {date:YYYY-MM-DD, title:string}.", "Reply with {time:HH:MM, note:text}"]
    + ["Schema: {timestamp:number, user:string}"],
)
def test_a_json_shape_is_no_slot_with_a_format_spec(text):
    assert values(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "since the last reply 14 minutes",
        "Summarize the errors logged since the last 24 hours.",
        "Time since last check-in should be at least 5 minutes.",
    ],
)
def test_an_instruction_about_a_duration_is_no_reading(text):
    assert values(text) == []


def test_a_duration_after_its_label_is_read_whole():
    assert values("Time since the last reply: 14 minutes") == ["14 minutes"]


def test_a_comment_in_a_code_fence_heads_no_example_section():
    text = (
        "You are a coding assistant.\n\n## Tools\n```python\n# Example usage\nsearch('foo')\n```\n\n"
        "## Environment\nCurrent date: 2025-04-24\n"
    )
    assert "2025-04-24" in "".join(values(text))


@pytest.mark.parametrize(
    "text",
    [
        "You are a support bot. Answer the user politely.\nTimezone: Europe/Berlin\n",
        "Deploy settings for my app:\n- Timezone: Europe/Berlin\n",
    ],
)
def test_a_timezone_under_no_block_about_the_user_is_configuration(text):
    assert values(text) == []


def test_an_unclosed_raw_block_leaves_later_slots_rendered():
    assert values("Wrap literal braces in {% raw %} blocks.\nToday is {{ current_date }}.") == [
        "{{ current_date }}"
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Hôm nay là Ngày 24 Tháng 4 Năm 2025.", "Ngày 24 Tháng 4 Năm 2025"),
        ("วันนี้คือวันพฤหัสบดีที่ 24 เมษายน พ.ศ. 2568", "24 เมษายน พ.ศ. 2568"),
        ("We’re now in 2025.", "2025"),
        ("Recent commits:\r\na1b2c3d Fix the cart\r\n", "Recent commits:\r\na1b2c3d Fix the cart"),
    ],
)
def test_capitals_eras_typographic_apostrophes_and_crlf(text, value):
    assert value in values(text)


def test_a_current_position_is_a_job_as_often_as_a_place():
    assert values("Current position: Senior Engineer at Acme") == []
