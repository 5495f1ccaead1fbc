"""analyzer.rewrite.cache_key and .ttl: one key per app and tenant; 1 h only where it pays."""

from __future__ import annotations

from analyzer.rewrite.cache_key import PROMPT_CACHE_KEY, add_cache_key, head_key
from analyzer.rewrite.ttl import TTL_1H, HeadReturns, apply_ttl, pays_for_1h


def chat(clock: str, tools_order=("a", "b")):
    return {
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": n, "parameters": {}}} for n in tools_order],
        "messages": [
            {"role": "system", "content": f"Current time: {clock}\nYou are Atlas."},
            {"role": "user", "content": "hi"},
        ],
    }


def test_one_key_per_app_whatever_its_clock_says_and_tool_order():
    a, _ = add_cache_key("tenant-1", "openai-chat", chat("08:15:03"))
    b, _ = add_cache_key("tenant-1", "openai-chat", chat("09:47:12", ("b", "a")))
    assert (
        a["prompt_cache_key"] == b["prompt_cache_key"]
        and a["prompt_cache_key"].startswith("pg-")
        and len(a["prompt_cache_key"]) <= 64
    )
    other_tenant, _ = add_cache_key("tenant-2", "openai-chat", chat("08:15:03"))
    other_app, _ = add_cache_key(
        "tenant-1",
        "openai-chat",
        {**chat("08:15:03"), "messages": [{"role": "system", "content": "You are Bob."}]},
    )
    assert len({a["prompt_cache_key"], other_tenant["prompt_cache_key"], other_app["prompt_cache_key"]}) == 3


def test_a_client_key_is_never_touched_and_anthropic_gets_none():
    assert add_cache_key("t", "openai-chat", {**chat("1"), "prompt_cache_key": "mine"}) == (None, [])
    assert add_cache_key("t", "anthropic-messages", {"messages": []}) == (None, [])
    out, applied = add_cache_key("t", "openai-responses", {"instructions": "You are Atlas.", "input": "hi"})
    assert applied == [PROMPT_CACHE_KEY] and out["prompt_cache_key"] == "pg-" + head_key(
        "t", "openai-responses", out
    )


def test_1h_pays_when_slow_returns_outweigh_the_dearer_write():
    assert not pays_for_1h(None) and not pays_for_1h(HeadReturns(writes=1, slow_returns=0))
    assert pays_for_1h(HeadReturns(writes=1, slow_returns=1))  # 1 × 1.15 > 1 × 0.75
    assert not pays_for_1h(HeadReturns(writes=2, slow_returns=1))  # 1.15 < 1.5
    assert pays_for_1h(HeadReturns(writes=3, slow_returns=2))  # 2.3 > 2.25


def test_ttl_goes_on_head_breakpoints_in_cache_order_only():
    eph = {"type": "ephemeral"}
    body = {
        "tools": [{"name": "a", "cache_control": eph}],
        "system": [{"type": "text", "text": "s", "cache_control": eph}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "u", "cache_control": eph}]}],
    }
    out, applied = apply_ttl(body)
    assert applied == [TTL_1H]
    assert (
        out["tools"][0]["cache_control"]
        == out["system"][0]["cache_control"]
        == {"type": "ephemeral", "ttl": "1h"}
    )
    assert out["messages"] == body["messages"] and apply_ttl(out) == (None, [])
    explicit = {**body, "tools": [{"name": "a", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]}
    assert apply_ttl(explicit) == (None, [])  # a 5m first: nothing after it may be 1h
