"""PG105 no-breakpoint-at-stable-head: GPT-5.6+ bodies and logs whose long stable head has no breakpoint."""

from __future__ import annotations

import json

import pytest

from analyzer.lint.engine import run
from analyzer.lint.inputs import load

DEV = (
    "You are a coding agent working in the user's repository; follow its conventions and run its tests. " * 60
)  # ≈1,500 tokens
MARK = {"prompt_cache_breakpoint": {"mode": "explicit"}}


def chat(
    model: str = "gpt-5.6-terra", *, head_mark: bool = False, user_mark: bool = False, dev: str = DEV, **extra
) -> dict:
    return {
        "model": model,
        **extra,
        "messages": [
            {"role": "developer", "content": [{"type": "text", "text": dev, **(MARK if head_mark else {})}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Fix the failing test.", **(MARK if user_mark else {})}],
            },
        ],
    }


def findings(tmp_path, *bodies, name: str = "body.json"):
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    else:
        path.write_text(json.dumps(bodies[0], indent=2))
    loaded = load([str(path)])
    assert not loaded.errors
    return run(loaded, {"PG105"})


def test_the_codex_pattern_is_flagged_at_the_head_message(tmp_path):
    (f,) = findings(tmp_path, chat())
    assert f.code == "PG105" and f.rule.name == "no-breakpoint-at-stable-head" and f.field == "messages[0]"
    assert "≈1,5" in f.message and "gpt-5.6-terra caches only at breakpoints" in f.message


@pytest.mark.parametrize("model", ["gpt-5.6-sol", "openai/gpt-5.6-luna", "gpt-5.7", "gpt-6"])
def test_every_breakpoint_generation_is_checked(tmp_path, model):
    assert len(findings(tmp_path, chat(model))) == 1


@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-4o", "o4-mini", "claude-sonnet-4-5"])
def test_older_models_are_never_flagged(tmp_path, model):
    assert findings(tmp_path, chat(model)) == []


def test_a_marked_head_a_short_head_and_explicit_markers_past_the_head_are_clean(tmp_path):
    assert findings(tmp_path, chat(head_mark=True)) == []
    assert findings(tmp_path, chat(dev="Be brief. " * 300)) == []  # ≈760 tokens: below the minimum
    explicit = chat(user_mark=True, prompt_cache_options={"mode": "explicit"})
    assert findings(tmp_path, explicit) == []  # the app places its breakpoints itself
    # implicit mode: a marker only on the changing user message does not cover the head
    assert len(findings(tmp_path, chat(user_mark=True))) == 1
    # explicit mode without a single marker caches nothing at all
    assert len(findings(tmp_path, chat(prompt_cache_options={"mode": "explicit"}))) == 1


def test_responses_instructions_are_a_head(tmp_path):
    body = {"model": "gpt-5.6-terra", "instructions": DEV, "input": "Fix the failing test."}
    (f,) = findings(tmp_path, body)
    assert f.field == "instructions" and "(instructions)" in f.message
    marked = {
        "model": "gpt-5.6-terra",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": DEV, **MARK}]},
            {"role": "user", "content": "Fix the failing test."},
        ],
    }
    assert findings(tmp_path, marked) == []


def test_a_log_of_such_requests_is_one_finding_with_a_count(tmp_path):
    bodies = [chat() for _ in range(3)]
    for i, b in enumerate(bodies):
        b["messages"][1]["content"][0]["text"] = f"task {i}"
    (f,) = findings(tmp_path, *bodies, name="log.jsonl")
    assert f.line == 1 and "+2 more requests" in f.message
    # the proxy's logged records name the model beside the body
    records = [
        {"model": "gpt-5.6-terra", "request": {k: v for k, v in b.items() if k != "model"}} for b in bodies
    ]
    assert len(findings(tmp_path, *records, name="records.jsonl")) == 1


TOOLS = [
    {"type": "function", "function": {"name": "shell", "description": DEV, "parameters": {"type": "object"}}}
]


def test_a_head_of_tools_alone_has_no_part_to_mark_and_is_not_flagged(tmp_path):
    # no content part before the changing user message can carry a marker (tools take none):
    # the diagnosis and the missed savings do not count such a head either
    body = {
        "model": "gpt-5.6-terra",
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "Fix the failing test."}],
    }
    assert findings(tmp_path, body) == []
    schema = {
        "model": "gpt-5.6-terra",
        "input": "Fix it.",
        "text": {"format": {"type": "json_schema", "name": "out", "schema": {"description": DEV}}},
    }
    assert findings(tmp_path, schema) == []


def test_tools_before_a_short_system_message_are_flagged_at_that_message(tmp_path):
    body = {
        "model": "gpt-5.6-terra",
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Fix the failing test."},
        ],
    }
    (f,) = findings(tmp_path, body)
    assert f.field == "messages[0]" and "(tools, system/developer messages)" in f.message
