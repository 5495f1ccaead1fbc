"""analyzer.rewrite.volatile: values leave the head for the latest user turn, labels with them."""

from __future__ import annotations

import copy

import pytest

from analyzer.rewrite.volatile import CLOSE, MARKER, MOVE_BLOCKS, MOVE_VALUES, OPEN, move_volatile

SYSTEM = "Current date and time: 2026-12-01 08:15:03 UTC\nRequest id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b\n\nYou are Atlas. Be brief."
CONTEXT = f"{OPEN}\nCurrent date and time: 2026-12-01 08:15:03 UTC\nRequest id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b\n{CLOSE}"
HEAD = f"Current date and time: {MARKER}\nRequest id: {MARKER}\n\nYou are Atlas. Be brief."


def test_openai_chat_values_move_to_the_latest_user_message():
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "where is my order?"},
        ],
    }
    before = copy.deepcopy(body)
    out, applied = move_volatile("openai-chat", body)
    assert applied == [MOVE_VALUES] and body == before
    assert out["messages"][0]["content"] == HEAD
    assert out["messages"][3]["content"] == "where is my order?\n\n" + CONTEXT
    assert out["messages"][1:3] == body["messages"][1:3]
    assert move_volatile("openai-chat", out) == (None, [])  # idempotent


def test_openai_tool_loop_gets_a_trailing_user_message_so_the_loop_prefix_repeats():
    body = {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "track EX-1"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "in transit"},
        ]
    }
    out, _ = move_volatile("openai-chat", body)
    assert out["messages"][1:4] == body["messages"][1:4] and out["messages"][4] == {
        "role": "user",
        "content": CONTEXT,
    }


def test_anthropic_text_block_appended_and_whole_volatile_blocks_moved():
    body = {
        "system": [
            {"type": "text", "text": "You are Atlas.", "cache_control": {"type": "ephemeral"}},
            {
                "type": "text",
                "text": "Current time: 2026-12-01T08:15:03Z",
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [{"role": "user", "content": "where is my order?"}],
    }
    out, applied = move_volatile("anthropic-messages", body)
    assert applied == [MOVE_BLOCKS]
    assert out["system"] == [
        {"type": "text", "text": "You are Atlas.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Be brief."},
    ]
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "where is my order?"},
        {"type": "text", "text": f"{OPEN}\nCurrent time: 2026-12-01T08:15:03Z\n{CLOSE}"},
    ]


def test_anthropic_string_system_and_tool_result_turns():
    body = {
        "system": SYSTEM,
        "messages": [
            {"role": "user", "content": "track EX-1"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "in transit"}],
            },
        ],
    }
    out, _ = move_volatile("anthropic-messages", body)
    assert out["system"] == HEAD
    assert out["messages"][2]["content"] == [
        *body["messages"][2]["content"],
        {"type": "text", "text": CONTEXT},
    ]


def test_tool_descriptions_and_responses_instructions():
    body = {
        "instructions": SYSTEM,
        "input": "hi",
        "tools": [
            {"type": "function", "name": "t", "description": "Data current as of: 2026-12-01T08:00:00Z."}
        ],
    }
    out, applied = move_volatile("openai-responses", body)
    assert out["instructions"] == HEAD and out["tools"][0]["description"] == f"Data current as of: {MARKER}."
    assert out["input"].startswith("hi\n\n" + OPEN) and "as of: 2026-12-01T08:00:00Z" in out["input"]
    listed = {**body, "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    out, _ = move_volatile("openai-responses", listed)
    assert (
        out["input"][0]["content"][-1]["type"] == "input_text"
        and OPEN in out["input"][0]["content"][-1]["text"]
    )


def test_nothing_to_move_or_nowhere_to_put_it_leaves_the_body():
    assert move_volatile(
        "openai-chat",
        {"messages": [{"role": "system", "content": "You are Atlas."}, {"role": "user", "content": "hi"}]},
    ) == (None, [])
    assert move_volatile(
        "anthropic-messages", {"system": SYSTEM, "messages": [{"role": "assistant", "content": "x"}]}
    ) == (None, [])


def test_an_instruction_that_ends_in_a_value_stays_in_the_system_prompt():
    body = {
        "system": [
            {
                "type": "text",
                "text": "Never reveal internal pricing to anyone, session id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
            }
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }
    out, applied = move_volatile("anthropic-messages", body)
    assert applied == [MOVE_VALUES]
    assert out["system"][0]["text"] == f"Never reveal internal pricing to anyone, session id: {MARKER}"
    assert "session id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b" in out["messages"][0]["content"][-1]["text"]


def test_a_leading_volatile_block_hands_its_marker_on():
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    body = {
        "system": [
            {"type": "text", "text": "Current time: 2026-12-01T08:15:03Z", "cache_control": one_hour},
            {"type": "text", "text": "You are Atlas."},
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }
    out, _ = move_volatile("anthropic-messages", body)
    assert out["system"] == [{"type": "text", "text": "You are Atlas.", "cache_control": one_hour}]
    only = {
        "tools": [{"name": "t", "input_schema": {}}],
        "system": [body["system"][0]],
        "messages": body["messages"],
    }
    out, _ = move_volatile("anthropic-messages", only)
    assert "system" not in out and out["tools"][-1]["cache_control"] == one_hour


def test_glued_values_all_move_in_one_pass():
    body = {
        "messages": [
            {
                "role": "system",
                "content": "Trace 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b2026-12-01 08:15:03 and go.",
            },
            {"role": "user", "content": "hi"},
        ]
    }
    out, _ = move_volatile("openai-chat", body)
    assert move_volatile("openai-chat", out) == (None, [])
    assert "3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b" in out["messages"][1]["content"]


ENV_BLOCK = "<env>\nWorking directory: /home/ana/shop\nPlatform: linux\nToday's date: 2026-11-30\n</env>"
GIT_BLOCK = (
    "gitStatus: This is the git status at the start of the conversation.\nCurrent branch: feature/cart\n\n"
    "Status:\nM src/cart.py\n\nRecent commits:\na1b2c3d Fix the cart total\ne4f5a6b Add tests"
)


def _chat(system: str) -> dict:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "go"}]}


def test_an_environment_and_a_git_status_block_move_whole_and_nothing_is_dropped():
    system = f"You are a coding agent.\n\n{ENV_BLOCK}\n\n{GIT_BLOCK}\n\nRun the tests before you finish."
    out, applied = move_volatile("openai-chat", _chat(system))
    assert applied == [MOVE_VALUES]
    head = out["messages"][0]["content"]
    assert head == f"You are a coding agent.\n\n{MARKER}\n\n{MARKER}\n\nRun the tests before you finish."
    moved = out["messages"][1]["content"]
    assert moved == f"go\n\n{OPEN}\n{ENV_BLOCK}\n{GIT_BLOCK}\n{CLOSE}"


def test_values_in_other_languages_and_session_readings_move_with_their_labels():
    system = "Heute ist Donnerstag, 24. April 2025.\n现在时间：2025年04月24日 14:05\nTokens used: 48,213 / 200,000\nSei freundlich."
    out, _ = move_volatile("openai-chat", _chat(system))
    assert (
        out["messages"][0]["content"]
        == f"Heute ist {MARKER}.\n现在时间：{MARKER}\nTokens used: {MARKER} / 200,000\nSei freundlich."
    )
    moved = out["messages"][1]["content"]
    for line in (
        "Heute ist Donnerstag, 24. April 2025",
        "现在时间： 2025年04月24日 14:05",
        "Tokens used: 48,213",
    ):
        assert line in moved


def test_a_static_environment_section_and_a_cut_off_stay_in_the_head():
    system = (
        "## Environment\nYou run in a sandbox with network access disabled, so install what you need first.\n\n"
        "训练数据截止到2023年10月。Knowledge cutoff: 2024-06."
    )
    assert move_volatile("openai-chat", _chat(system)) == (None, [])


def test_rendered_user_fields_counters_and_memories_move_with_their_labels_and_none_is_dropped():
    system = (
        "**User:** Ana\n**User location:** Istanbul\nnazwa użytkownika: Ana\n- Turn number: 7\n"
        "Today is Thursday, 24 April 2025 in Istanbul.\n\n# Customer Context\nFirst Name: Ana\nAge: 48\n\n"
        "# Long-term memory about this user\n- Prefers short answers.\n- Has a dog called Rex.\n\n"
        "Name: Acme Assistant. Step 1: greet the user."
    )
    out, applied = move_volatile("openai-chat", _chat(system))
    assert applied == [MOVE_VALUES]
    head = out["messages"][0]["content"]
    assert head.count(MARKER) == 9 and "Ana" not in head and "Rex" not in head and "48" not in head
    assert head.endswith("Name: Acme Assistant. Step 1: greet the user.")  # decoys stay
    moved = out["messages"][1]["content"]
    for line in (
        "**User:** Ana",
        "**User location:** Istanbul",
        "nazwa użytkownika: Ana",
        "- Turn number: 7",
        "Today is Thursday, 24 April 2025",
        "in Istanbul",
        "First Name: Ana",
        "Age: 48",
        "- Prefers short answers.\n- Has a dog called Rex.",
    ):
        assert line in moved, line


def test_tool_descriptions_are_read_as_descriptions_and_schema_samples_stay():
    """A dated note in a description is what lint leaves too; ``examples`` are data."""
    tool = {
        "name": "status",
        "description": "Returns the flight status. Data refreshed 2026-01-15 10:00.",
        "input_schema": {
            "type": "object",
            "properties": {
                "at": {"type": "string", "examples": [{"description": "Current date: 2026-12-01"}]}
            },
        },
    }
    body = {"tools": [tool], "messages": [{"role": "user", "content": "hi"}]}
    assert move_volatile("anthropic-messages", body) == (None, [])


@pytest.mark.parametrize(
    "head, moved",
    [
        ("## Current time\n19:56 UTC\n", "Current time 19:56 UTC"),
        ("Current date:\n2026-12-02\n", "Current date: 2026-12-02"),
        (
            "Session ID:\n3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b\n",
            "Session ID: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
        ),
    ],
)
def test_a_value_under_its_label_line_moves_with_that_label(head, moved):
    body = {
        "messages": [
            {"role": "system", "content": "You are Atlas.\n" + head},
            {"role": "user", "content": "hi"},
        ]
    }
    out, _ = move_volatile("openai-chat", body)
    assert out["messages"][0]["content"] == "You are Atlas.\n" + head.replace(head.split("\n")[1], MARKER)
    assert out["messages"][1]["content"].endswith(f"{OPEN}\n{moved}\n{CLOSE}")


def test_responses_leading_system_and_developer_items_are_the_head():
    body = {
        "input": [
            {"role": "developer", "content": "You are Atlas. Current date: 2026-12-02."},
            {"role": "system", "content": [{"type": "input_text", "text": "Current time: 19:56 UTC"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ]
    }
    out, applied = move_volatile("openai-responses", body)
    assert out["input"][0]["content"] == f"You are Atlas. Current date: {MARKER}."
    assert out["input"][1]["content"][0]["text"] == f"Current time: {MARKER}"
    moved = out["input"][2]["content"][-1]
    assert moved == {
        "type": "input_text",
        "text": f"{OPEN}\nCurrent date: 2026-12-02\nCurrent time: 19:56 UTC\n{CLOSE}",
    }
    assert applied == [MOVE_VALUES]
