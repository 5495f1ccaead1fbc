from __future__ import annotations

import copy
import time

import pytest

from analyzer.rewrite.breakpoints import ADD_BREAKPOINTS, CAP_BREAKPOINTS, REWRITES, Placement
from analyzer.rewrite.breakpoints import place_breakpoints as rewrite_request
from analyzer.segments import anthropic_segments
from proxy.emulator.anthropic_cache import CacheRuleError, apply_anthropic_cache, breakpoints
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.provider_cache import ProviderCache

ROUTE = "/v1/messages"
MODEL = "claude-sonnet-4-5"  # minimum 1,024 tokens ≈ 4,096 bytes
LONG = "You are a careful assistant. " * 200  # ~5,800 bytes: over 1,024 tokens on its own
SHORT = "Be brief."
CC = {"type": "ephemeral"}


def text(t: str, **extra: object) -> dict:
    return {"type": "text", "text": t, **extra}


def rewrite(
    body: dict, model: str | None = None, provider: str = "anthropic", route: str = ROUTE
) -> Placement:
    before = copy.deepcopy(body)
    out = rewrite_request(provider, route, body, model=model)
    assert body == before, "the input body must never be mutated"
    return out


def marked(body: dict) -> list[str]:
    return [s.path for s in anthropic_segments(body) if s.cache_control]


def assert_same_prompt(original: dict, rewritten: dict) -> None:
    assert [s.data for s in anthropic_segments(original)] == [s.data for s in anthropic_segments(rewritten)]


def strip_markers(value: object) -> object:
    if isinstance(value, dict):
        return {k: strip_markers(v) for k, v in value.items() if k != "cache_control"}
    return [strip_markers(v) for v in value] if isinstance(value, list) else value


def conversation(turns: int) -> dict:
    messages: list[dict] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i} " + "detail " * 40})
        messages.append({"role": "assistant", "content": [text(f"answer {i} " + "more " * 40)]})
    messages.append({"role": "user", "content": "the final question"})
    return {"model": MODEL, "max_tokens": 64, "system": LONG, "messages": messages}


def test_add_breakpoints_at_tools_system_and_conversation():
    tools = [{"name": f"tool_{i}", "description": LONG, "input_schema": {"type": "object"}} for i in range(2)]
    body = {**conversation(1), "tools": tools}
    out = rewrite(body)
    assert out.applied == [ADD_BREAKPOINTS] and out.applied[0] in REWRITES
    assert marked(out.body) == ["tools[1]", "system[0]", "messages[1].content[0]"]
    assert out.body["system"] == [text(LONG, cache_control=CC)]  # string system → one block, marked
    assert out.body["messages"][2]["content"] == "the final question"  # the final user turn is untouched
    assert (
        out.body["messages"][0]["content"] == body["messages"][0]["content"]
    )  # no breakpoint: stays a string
    assert_same_prompt(body, out.body)
    breakpoints(anthropic_segments(out.body), out.body, 4)  # the emulator's rule check accepts it


def test_short_prompt_gets_no_breakpoint():
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "ok"},
    ]
    assert rewrite({"model": MODEL, "system": SHORT, "messages": turns}) == Placement(None, [])


def test_threshold_is_the_cumulative_prefix_and_the_models_minimum():
    body = {
        "model": MODEL,
        "tools": [{"name": "t", "input_schema": {}}],
        "system": LONG,
        "messages": [{"role": "user", "content": "q"}],
    }
    out = rewrite(body)
    assert marked(out.body) == ["system[0]"]  # the tool alone is short; tools + system is long enough
    assert_same_prompt(body, out.body)
    mid = {**body, "system": "x" * 3000}  # ~760 tokens in all: under 1,024, over Opus 5's 512
    assert rewrite(mid).body is None
    assert marked(rewrite(mid, model="claude-opus-5").body) == ["system[0]"]  # model= overrides the body's
    assert rewrite(body, model="claude-haiku-4-5").body is None  # 4,096 tokens needed


def test_a_single_user_turn_is_never_marked():
    body = {"model": MODEL, "system": SHORT, "messages": [{"role": "user", "content": LONG}]}
    assert rewrite(body).body is None


def test_conversation_breakpoint_skips_thinking_and_empty_blocks():
    body = conversation(1)
    body["system"] = ""
    body["messages"][0]["content"] = LONG
    body["messages"][1]["content"] = [
        text("answer " * 10),
        {"type": "thinking", "thinking": "hm", "signature": "s"},
        text(""),
    ]
    out = rewrite(body)
    assert marked(out.body) == ["messages[1].content[0]"]
    assert out.body["system"] == ""
    assert_same_prompt(body, out.body)


@pytest.mark.parametrize(
    "where", ["system", "message", "tool", "top-level", "nested-tool-result", "null-marker"]
)
def test_an_existing_breakpoint_blocks_add(where: str):
    body = {**conversation(2), "tools": [{"name": "t", "description": LONG, "input_schema": {}}]}
    if where == "system":
        body["system"] = [text(LONG, cache_control=CC)]
    elif where == "message":
        body["messages"][0]["content"] = [text("q", cache_control=CC)]
    elif where == "tool":
        body["tools"][0]["cache_control"] = CC
    elif where == "top-level":
        body["cache_control"] = CC
    elif where == "nested-tool-result":
        body["messages"][2]["content"] = [
            {"type": "tool_result", "tool_use_id": "x", "content": [text("r", cache_control=CC)]}
        ]
    else:
        body["messages"][1]["content"][0]["cache_control"] = None
    assert rewrite(body) == Placement(None, [])


def test_cap_keeps_the_first_and_the_latest_breakpoints():
    body = conversation(3)
    body["system"] = [text(LONG, cache_control={"type": "ephemeral", "ttl": "1h"})]
    for msg in body["messages"]:
        msg["content"] = (
            [text(msg["content"], cache_control=CC)] if isinstance(msg["content"], str) else msg["content"]
        )
        msg["content"][-1]["cache_control"] = CC
    with pytest.raises(CacheRuleError):
        breakpoints(anthropic_segments(body), body, 4)
    out = rewrite(body)
    assert out.applied == [CAP_BREAKPOINTS]
    assert marked(out.body) == [
        "system[0]",
        "messages[4].content[0]",
        "messages[5].content[0]",
        "messages[6].content[0]",
    ]
    assert [s.cache_control for s in anthropic_segments(out.body) if s.cache_control] == [
        "1h",
        "5m",
        "5m",
        "5m",
    ]
    assert_same_prompt(body, out.body)
    breakpoints(anthropic_segments(out.body), out.body, 4)


def test_cap_counts_the_top_level_automatic_breakpoint():
    body = conversation(2)
    body["cache_control"] = CC
    body["messages"] = [
        {**m, "content": [text(str(m["content"]), cache_control=CC)]} for m in body["messages"][:4]
    ] + body["messages"][4:]
    out = rewrite(body)  # 4 block markers + the automatic one on the last block = 5
    assert out.applied == [CAP_BREAKPOINTS] and out.body["cache_control"] == CC
    assert marked(out.body) == ["messages[0].content[0]", "messages[2].content[0]", "messages[3].content[0]"]
    breakpoints(anthropic_segments(out.body), out.body, 4)
    body["messages"] = body["messages"][:4]  # now the automatic breakpoint shares the last block: 4 in all
    assert rewrite(body).body is None


def test_cap_reaches_markers_nested_in_tool_results():
    blocks = [text(f"r{i}", cache_control=CC) for i in range(5)]
    body = {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": blocks}]}
        ],
    }
    out = rewrite(body)
    nested = out.body["messages"][0]["content"][0]["content"]
    assert ["cache_control" in b for b in nested] == [True, False, True, True, True]
    assert strip_markers(out.body) == strip_markers(body)  # segments keep nested markers in their bytes


def test_four_breakpoints_are_left_alone():
    body = {
        "model": MODEL,
        "system": [text(f"s{i}", cache_control=CC) for i in range(4)],
        "messages": [{"role": "user", "content": "q"}],
    }
    assert rewrite(body) == Placement(None, [])


def test_openai_and_other_routes_are_never_rewritten():
    body = {**conversation(2), "tools": [{"name": "t", "description": LONG, "input_schema": {}}]}
    assert rewrite(body).body is not None
    assert rewrite(body, provider="openai", route="/v1/chat/completions") == Placement(None, [])
    assert rewrite(body, route="/v1/messages/count_tokens") == Placement(None, [])


@pytest.mark.parametrize(
    "body",
    [
        [],
        None,
        "text",
        3,
        {"model": MODEL, "system": LONG},  # no messages
        {"model": MODEL, "system": LONG, "messages": "hi"},
        {"model": MODEL, "system": LONG, "messages": ["hi", {"role": "user", "content": "q"}]},
        {
            "model": MODEL,
            "system": LONG,
            "messages": [{"role": "assistant", "content": 7}, {"role": "user", "content": "q"}],
        },
        {
            "model": MODEL,
            "system": LONG,
            "messages": [{"role": "assistant"}, {"role": "user", "content": "q"}],
        },
        {"model": MODEL, "system": LONG, "messages": [{"role": "user", "content": ["q"]}]},
        {"model": MODEL, "system": 42, "messages": [{"role": "user", "content": "q"}]},
        {"model": MODEL, "system": [LONG], "messages": [{"role": "user", "content": "q"}]},
        {
            "model": MODEL,
            "tools": {"name": "t"},
            "system": LONG,
            "messages": [{"role": "user", "content": "q"}],
        },
        {"model": MODEL, "tools": ["t"], "system": LONG, "messages": [{"role": "user", "content": "q"}]},
    ],
)
def test_odd_bodies_are_never_rewritten(body):
    assert rewrite_request("anthropic", ROUTE, body, model=None) == Placement(None, [])


def test_odd_model_and_role_types_do_not_raise():
    body = conversation(1)
    body["model"] = ["not", "a", "string"]
    body["messages"][1]["role"] = 5
    out = rewrite_request("anthropic", ROUTE, body, model=None)  # default 1,024-token minimum
    assert marked(out.body) == ["system[0]", "messages[1].content[0]"]


def test_added_breakpoints_turn_into_cache_reads_on_the_emulator():
    """Three turns of one conversation: with the rewrite each turn reads more from cache; without, nothing."""

    def reads(rewritten: bool) -> list[int]:
        store, config = ProviderCache(1000, time.monotonic), EmulatorConfig()
        out = []
        for turns in range(3):
            body = conversation(turns)
            body = (rewrite(body).body or body) if rewritten else body
            out.append(apply_anthropic_cache(store, config, b"key", ROUTE, body).cache_read_input_tokens)
        return out

    assert reads(False) == [0, 0, 0]
    first, second, third = reads(True)
    assert first == 0 and 0 < second < third
