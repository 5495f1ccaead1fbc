"""analyzer.detection.siblings: a slot of no telling name on a ``Key: {slot}`` line of a block whose
other slots are rendered per request is found with them; content, settings, the deployment's own,
slots in a sentence and blocks of too few found slots are not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.siblings import REASON


def _siblings(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.reason == REASON]


def test_a_slot_among_rendered_siblings_of_a_key_block_is_found():
    text = "# 当前状态\n- 地点：{location_name}\n- 时间：{time}\n- 队友：{teammates}\n\n规则：简短。\n"
    assert _siblings(text) == ["{teammates}"]
    env = "Environment:\n- **Date**: {{ today }}\n- **Session**: {{ session_id }}\n- **Mood**: {{ mood }}\n"
    assert _siblings(env) == ["{{ mood }}"]


@pytest.mark.parametrize(
    "text",
    [
        "- Date: {today}\n- Model: {model}\n- Agent: {{ agent.id }}\n- Time: {time}\n",  # the deployment's own
        "- Date: {today}\n- Question: {question}\n- Time: {time}\n",  # the request's content
        "- Date: {today}\n- Mood: {mood}\n\n- Tone: {tone}\n",  # one found slot in the block
        "- Date: {today}\n- Time: {time}\nAnswer about {topic} briefly.\n",  # a slot inside a sentence
        "- Date: {today}\n- Time: {time}\n- A: {a}\n- B: {b}\n",  # the found ones do not outnumber the rest
    ],
)
def test_no_sibling_where_the_slot_is_fixed_content_in_a_sentence_or_the_found_ones_are_few(text):
    assert _siblings(text) == []


def test_a_blank_line_of_spaces_or_a_heading_ends_a_block_and_crlf_lines_are_read():
    assert _siblings("- Time: {current_time}\n- Date: {current_date}\n  \n## Style\n- Voice: {vibe}\n") == []
    assert _siblings("- Time: {current_time}\r\n- Date: {current_date}\r\n- Mood: {vibe}\r\n") == ["{vibe}"]
