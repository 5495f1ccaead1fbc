"""analyzer.rewrite: the modes end to end on request bodies, and the guarantees as properties.

Hypothesis builds agent-like requests for all three APIs: system prompts mixing stable
sentences with clocks, dates of today, UUIDs and request ids (and precision cases that must
stay), tools in any order with keys in any order, conversations of any length ending in a
user turn or a tool result. For every one: idempotent, deterministic, the input never
mutated, nothing lost, ``safe`` changes no message text, never more than 4 breakpoints.
"""

from __future__ import annotations

import copy
import json

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.rewrite import AGGRESSIVE, APIS, MODES, OFF, SAFE, HeadReturns, api_for, rewrite_request
from analyzer.rewrite.cli import infer_api, rewrite_command
from analyzer.rewrite.movable import clear_cache
from analyzer.rewrite.tools import tool_name
from proxy.bench.agent_workload import conversation

STABLE = [
    "You are Atlas, the operations agent.",
    "Answer in the customer's language.",
    "Office hours are 09:00-17:00.",
    "The API is at version 2.3.1.",
    "Knowledge cutoff: 2024-06-01.",
    "Never promise a delivery date.",
]


@st.composite
def volatile_line(draw):
    kind = draw(st.sampled_from(["clock", "uuid", "rid", "today"]))
    h, m, s = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    if kind == "clock":
        value = f"2026-12-{draw(st.integers(1, 28)):02d} {h:02d}:{m:02d}:{s:02d} UTC"
        return "Current date and time: ", value
    if kind == "uuid":
        value = "%08x-%04x-4%03x-a%03x-%012x" % tuple(
            draw(st.integers(0, 16**n - 1)) for n in (8, 4, 3, 3, 12)
        )
        return "Request id: ", value
    if kind == "rid":
        return "Session: ", "sess_" + "".join(
            draw(st.lists(st.sampled_from("0123456789abcdef"), min_size=20, max_size=20))
        )
    return "Today is ", f"December {draw(st.integers(1, 28))}, 2026"


@st.composite
def requests(draw):
    api = draw(st.sampled_from(APIS))
    lines = draw(st.lists(st.one_of(st.sampled_from(STABLE), volatile_line()), min_size=1, max_size=6))
    values = [v[1] for v in lines if isinstance(v, tuple)]
    system = "\n".join(line if isinstance(line, str) else line[0] + line[1] for line in lines)
    names = draw(
        st.lists(st.sampled_from(["lookup", "refund", "track", "ticket", "email"]), unique=True, max_size=5)
    )
    tools = []
    for name in names:
        props = {k: {"type": "string", "description": k} for k in draw(st.permutations(["b", "a", "c"]))}
        schema = dict(draw(st.permutations([("type", "object"), ("properties", props), ("required", ["a"])])))
        if api == "anthropic-messages":
            tools.append({"name": name, "description": f"{name} tool", "input_schema": schema})
        elif api == "openai-chat":
            tools.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": f"{name} tool", "parameters": schema},
                }
            )
        else:
            tools.append(
                {"type": "function", "name": name, "description": f"{name} tool", "parameters": schema}
            )
    turns = draw(
        st.lists(
            st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
            min_size=1,
            max_size=5,
        )
    )
    tool_loop = draw(st.booleans())
    body: dict = {"model": "claude-sonnet-4-6" if api == "anthropic-messages" else "gpt-4o", "max_tokens": 16}
    if tools:
        body["tools"] = tools
    if api == "anthropic-messages":
        body["system"] = draw(st.sampled_from([system, [{"type": "text", "text": system}]]))
        messages = []
        for text in turns:
            messages += [{"role": "user", "content": text or "?"}, {"role": "assistant", "content": "ok"}]
        messages.pop()
        if tool_loop:
            messages += [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "u1", "content": "done"}],
                },
            ]
        body["messages"] = messages
    elif api == "openai-chat":
        messages = [{"role": "system", "content": system}]
        for text in turns:
            messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
        messages.pop()
        if tool_loop:
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "done"},
            ]
        body["messages"] = messages
    else:
        body["instructions"] = system
        body["input"] = draw(st.sampled_from([turns[-1], [{"role": "user", "content": t} for t in turns]]))
    return api, body, values


def _texts(body: dict) -> list[str]:
    """Every turn's text, in order (markers and block splits aside; system messages are the head)."""
    out = []
    for m in body.get("messages") or (body["input"] if isinstance(body.get("input"), list) else []):
        if m.get("role") in ("system", "developer"):
            continue  # the head: aggressive may change it
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(b.get("text", "") if isinstance(b, dict) else "" for b in content))
    if isinstance(body.get("input"), str):
        out.append(body["input"])
    return out


def _breakpoints(value) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(_breakpoints(v) for v in value)
    return 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.sampled_from([SAFE, AGGRESSIVE]), st.booleans())
def test_properties(req, mode, slow_reuse):
    api, body, values = req
    original = copy.deepcopy(body)
    reuse = HeadReturns(1, 2) if slow_reuse else None
    first = rewrite_request(api, body, mode=mode, tenant="t", head_returns=reuse)
    assert body == original  # never mutated
    clear_cache()  # as in a fresh process: the answer may not depend on what was seen before
    again = rewrite_request(api, copy.deepcopy(body), mode=mode, tenant="t", head_returns=reuse)
    assert (
        orjson.dumps(again.body) == orjson.dumps(first.body) and again.applied == first.applied
    )  # deterministic
    out = first.body if first.body is not None else body
    assert rewrite_request(api, out, mode=mode, tenant="t", head_returns=reuse).body is None  # idempotent
    dumped = orjson.dumps(out).decode()
    assert sorted(tool_name(t) for t in out.get("tools", [])) == sorted(
        tool_name(t) for t in body.get("tools", [])
    )
    for value in values:
        assert value in dumped  # moved, never dropped
    if mode == SAFE:
        assert _texts(out) == _texts(body)
        assert json.dumps(out.get("system"), sort_keys=True).count("Current") == json.dumps(
            body.get("system"), sort_keys=True
        ).count("Current")
    else:
        for text, new in zip(_texts(body), _texts(out)):
            assert (
                new.startswith(text) or text == ""
            )  # the model reads every turn as sent, values appended at most
    if api == "anthropic-messages":
        assert _breakpoints(out) <= 4


def test_off_and_routes_without_a_rewrite():
    body = next(conversation("openai", 1))
    assert rewrite_request("openai-chat", body, mode=OFF).body is None
    assert (
        api_for("openai", "/v1/embeddings") is None
        and api_for("anthropic", "/v1/messages/count_tokens") is None
    )
    assert (
        api_for("anthropic", "/v1/messages") == "anthropic-messages"
        and api_for("openai", "/v1/responses") == "openai-responses"
    )
    with pytest.raises(ValueError):
        rewrite_request("openai-chat", body, mode="wild")


def test_a_body_it_does_not_understand_is_left_and_named():
    assert rewrite_request("openai-chat", {"messages": "not a list"}, mode=SAFE).applied == [
        "skipped-unknown-shape"
    ]
    assert rewrite_request(
        "openai-chat", {"tools": None, "messages": [{"role": "user", "content": "hi"}]}, mode=SAFE
    ).applied == ["prompt-cache-key"]
    assert rewrite_request("anthropic-messages", {"messages": []}, mode=AGGRESSIVE).body is None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_agent_loop_gets_one_stable_head(provider):
    """24 turns with a clock and a request id in the system prompt and tools in a new order
    each call: after aggressive, every request's head (tools + system) is the same bytes."""
    api = api_for(provider, "/v1/messages" if provider == "anthropic" else "/v1/chat/completions")
    heads = set()
    for body in conversation(provider, 24):
        out = rewrite_request(api, body, mode=AGGRESSIVE, tenant="t").body
        system = out["system"] if provider == "anthropic" else out["messages"][0]
        heads.add(orjson.dumps([out["tools"], system]))
    assert len(heads) == 1
    assert MODES == (OFF, SAFE, AGGRESSIVE)


def test_cli_prints_the_body_or_a_diff(tmp_path):
    body = next(conversation("anthropic", 1))
    path = tmp_path / "req.json"
    path.write_text(json.dumps(body))
    runner = CliRunner()
    result = runner.invoke(rewrite_command, [str(path), "--mode", "aggressive"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert "Request id: [see the end" in out["system"][0]["text"]
    assert "anthropic-messages, --rewrite aggressive: sort-tools" in result.stderr
    assert "move-volatile-values" in result.stderr
    diff = runner.invoke(rewrite_command, [str(path), "--diff"])
    assert (
        diff.exit_code == 0
        and diff.stdout.startswith("---")
        and "\n+" in diff.stdout
        and "sort-tools" in diff.stderr
    )
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert runner.invoke(rewrite_command, [str(bad)]).exit_code == 2
    bad.write_text("{not json")
    assert runner.invoke(rewrite_command, [str(bad)]).exit_code == 2


def test_the_cli_tells_the_api_from_the_shape():
    assert infer_api({"instructions": "x", "input": "hi"}) == "openai-responses"
    assert infer_api({"system": "x", "messages": []}) == "anthropic-messages"
    assert (
        infer_api({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1"}]}]})
        == "anthropic-messages"
    )
    assert infer_api({"messages": [{"role": "system", "content": "x"}]}) == "openai-chat"


def test_aggressive_sorts_the_tools_before_a_moved_system_hands_them_its_breakpoint():
    """A system of one volatile block moves; its breakpoint lands on the last tool of the sorted
    list, so two clients that order their tools differently send the same head."""
    marker = {"type": "ephemeral"}
    heads = []
    for order in (("zeta", "alpha"), ("alpha", "zeta")):
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 10,
            "tools": [
                {"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}} for n in order
            ],
            "system": [{"type": "text", "text": "Current date: 2026-12-02", "cache_control": marker}],
            "messages": [{"role": "user", "content": "hi"}],
        }
        out = rewrite_request("anthropic-messages", body, mode=AGGRESSIVE).body
        assert [t["name"] for t in out["tools"]] == ["alpha", "zeta"]
        assert out["tools"][-1]["cache_control"] == marker and "system" not in out
        heads.append(out["tools"])
    assert heads[0] == heads[1]
