from __future__ import annotations

import pytest

from analyzer.cache_rules import min_cacheable_tokens, missed_tokens
from analyzer.diagnose import diagnose
from analyzer.segments import Seen, segments_for

LONG = "You are a careful assistant for ACME support. " * 120  # ~5.5 KB → ~1400 tokens
TOOL_A = {
    "type": "function",
    "function": {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    },
}
TOOL_B = {
    "type": "function",
    "function": {
        "name": "refund",
        "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}},
    },
}


def oa(system: str, user: str = "hi", tools=None, model: str = "gpt-4o-mini", ts: float = 0.0) -> Seen:
    body = {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if tools is not None:
        body["tools"] = tools
    return Seen("openai", model, ts, segments_for("openai", "/v1/chat/completions", body))


def an(
    system: str,
    user: str = "hi",
    *,
    cache: str | None = "5m",
    model: str = "claude-sonnet-4-5",
    ts: float = 0.0,
) -> Seen:
    block = {"type": "text", "text": system}
    if cache:
        block["cache_control"] = {"type": "ephemeral", **({"ttl": "1h"} if cache == "1h" else {})}
    body = {
        "model": model,
        "max_tokens": 10,
        "system": [block],
        "messages": [{"role": "user", "content": user}],
    }
    return Seen("anthropic", model, ts, segments_for("anthropic", "/v1/messages", body))


def test_no_earlier_request_no_diagnosis():
    assert diagnose(oa(LONG), None) is None


def test_new_question_is_not_a_miss():
    assert diagnose(oa(LONG, "what is 2+2?"), oa(LONG, "hello"), cached_tokens=1408) is None


def test_model_changed():
    found = diagnose(oa(LONG, model="gpt-4o"), oa(LONG, model="gpt-4o-mini"))
    assert found.reason == "model-changed"
    assert "gpt-4o-mini -> gpt-4o" in found.detail


def test_tool_order_changed():
    found = diagnose(oa(LONG, tools=[TOOL_B, TOOL_A]), oa(LONG, tools=[TOOL_A, TOOL_B]))
    assert found.reason == "tool-order"
    assert found.segment == 0 and found.path == "tools[0]"


def test_tools_changed():
    changed = {**TOOL_B, "function": {**TOOL_B["function"], "name": "refund_v2"}}
    found = diagnose(oa(LONG, tools=[TOOL_A, changed]), oa(LONG, tools=[TOOL_A, TOOL_B]))
    assert found.reason == "tools-changed"
    assert found.path == "tools[1]"
    # offset inside {"type":"function","function":{"name":"refund… → where "_v2" starts
    assert found.offset == len(b'{"type":"function","function":{"name":"refund')


def test_json_key_order_changed():
    reordered = {"function": TOOL_A["function"], "type": "function"}
    found = diagnose(oa(LONG, tools=[reordered]), oa(LONG, tools=[TOOL_A]))
    assert found.reason == "json-key-order"
    assert found.offset == 2  # {" then "t" vs "f"


def test_system_changed_names_offset():
    found = diagnose(oa(LONG + "Be brief."), oa(LONG + "Be thorough."))
    assert found.reason == "system-changed"
    assert found.path == "messages[0]"
    assert found.header().startswith("system-changed; path=messages[0]; offset=")
    assert found.offset > len(LONG)


def test_volatile_timestamp_in_system_prompt():
    found = diagnose(
        oa(f"Current time: 2026-11-30T14:05:09Z. {LONG}"), oa(f"Current time: 2026-11-30T14:02:41Z. {LONG}")
    )
    assert found.reason in ("volatile-time", "volatile-date")
    assert found.path == "messages[0]"


def test_volatile_uuid():
    found = diagnose(
        oa(f"{LONG} session 1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
        oa(f"{LONG} session 6fa459ea-ee8a-3ca4-894e-db77e160355e"),
    )
    assert found.reason == "volatile-uuid"


def test_ttl_expired():
    found = diagnose(oa(LONG, ts=1000.0), oa(LONG, ts=0.0), cached_tokens=0)
    assert found.reason == "ttl-expired"
    assert diagnose(oa(LONG, ts=100.0), oa(LONG, ts=0.0), cached_tokens=0).reason == "not-cached"


def test_anthropic_1h_ttl_and_breakpoints():
    assert diagnose(an(LONG, ts=1000.0, cache="1h"), an(LONG, cache="1h")).reason == "not-cached"
    assert diagnose(an(LONG, ts=1000.0), an(LONG)).reason == "ttl-expired"
    assert diagnose(an(LONG, cache=None, ts=10.0), an(LONG, cache=None)).reason == "no-cache-breakpoint"


def test_below_minimum():
    found = diagnose(oa("short system prompt", ts=5.0), oa("short system prompt"))
    assert found.reason == "below-minimum"
    assert min_cacheable_tokens("anthropic", "claude-3-5-haiku-20241022") == 2048
    assert min_cacheable_tokens("anthropic", "claude-sonnet-4-5") == 1024
    assert min_cacheable_tokens("openai", "gpt-4o") == 1024


def test_cached_is_not_a_miss():
    cur = oa(LONG, ts=5.0)
    assert diagnose(cur, oa(LONG), cached_tokens=1408) is None


def test_missed_tokens_rules():
    cur = oa(LONG, "q2", ts=10.0)
    n = len(cur.segments)
    sys_tokens = -(-len(cur.segments[0].data) // 4)
    expected = 1024 + (sys_tokens - 1024) // 128 * 128
    assert missed_tokens(cur, 1, cached_tokens=0, elapsed_s=10.0) == expected
    assert missed_tokens(cur, 1, cached_tokens=expected, elapsed_s=10.0) == 0
    assert (
        missed_tokens(cur, 1, cached_tokens=expected - 100, elapsed_s=10.0) == 0
    )  # under one step: rounding
    assert missed_tokens(cur, 1, cached_tokens=0, elapsed_s=4000.0) == 0  # past the TTL
    assert missed_tokens(cur, 0, cached_tokens=0, elapsed_s=1.0) == 0
    assert missed_tokens(oa("tiny"), 1, cached_tokens=0, elapsed_s=1.0) == 0  # below the minimum
    assert n == 2


def test_before_the_response_only_request_visible_causes():
    assert diagnose(oa(LONG, ts=100.0), oa(LONG), cached_tokens=None) is None
    assert diagnose(oa(LONG, ts=5000.0), oa(LONG), cached_tokens=None).reason == "ttl-expired"
    assert diagnose(oa("short", ts=1.0), oa("short"), cached_tokens=None).reason == "below-minimum"


def test_settle_matches_diagnose_after_the_response():
    from analyzer.diagnose import settle

    cases = [
        (oa(LONG, "q2", ts=30.0), oa(LONG, "q1"), 0),
        (oa(LONG, "q2", ts=30.0), oa(LONG, "q1"), 1408),
        (oa(LONG, "q2", ts=5000.0), oa(LONG, "q1"), 0),
        (oa("Now: 10:00:05. " + LONG, ts=5.0), oa("Now: 10:00:01. " + LONG), 0),
        (oa(LONG, model="gpt-4o"), oa(LONG), 0),
        (oa("short", ts=1.0), oa("short"), 0),
    ]
    for cur, prev, cached in cases:
        before = diagnose(cur, prev, cached_tokens=None)
        assert settle(cur, prev, before, cached) == diagnose(cur, prev, cached_tokens=cached)


def test_a_changed_history_message_is_checked_for_volatile_values():
    prev = oa(LONG, "ticket 1b4e28ba-2fa1-11d2-883f-0016d3cca427 please")
    cur = oa(LONG, "ticket 6fa459ea-ee8a-3ca4-894e-db77e160355e please")
    assert diagnose(cur, prev, cached_tokens=None) is None  # the last turn: new content
    body = lambda u: {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": LONG},
            {"role": "user", "content": u},
            {"role": "user", "content": "go"},
        ],
    }
    history = lambda u, ts: Seen(
        "openai", "gpt-4o-mini", ts, segments_for("openai", "/v1/chat/completions", body(u))
    )
    found = diagnose(
        history("ticket 6fa459ea-ee8a-3ca4-894e-db77e160355e please", 1.0),
        history("ticket 1b4e28ba-2fa1-11d2-883f-0016d3cca427 please", 0.0),
        cached_tokens=None,
    )
    assert found.reason == "volatile-uuid" and found.path == "messages[1]"


@pytest.mark.parametrize(
    "a, b, want",
    [
        (b"", b"", 0),
        (b"abc", b"abc", 3),
        (b"abc", b"abd", 2),
        (b"xbc", b"abc", 0),
        (b"ab", b"abc", 2),
        (b"a" * 999 + b"x", b"a" * 1000, 999),
    ],
)
def test_first_byte_difference(a, b, want):
    from analyzer.divergence import common_prefix_len as first_byte_difference

    assert first_byte_difference(a, b) == want


# -- GPT-5.6+: breakpoints ------------------------------------------------------------------------

DEV = (
    "You are a coding agent in the user's repository; follow its conventions and run its tests. " * 100
)  # ~9 KB
MARK = {"prompt_cache_breakpoint": {"mode": "explicit"}}


def g56(*messages, ts: float = 0.0, model: str = "gpt-5.6-terra", tools=None) -> Seen:
    """Messages as (role, text, marked) triples."""
    body = {
        "model": model,
        "messages": [
            {"role": r, "content": [{"type": "text", "text": t, **(MARK if m else {})}]}
            for r, t, m in messages
        ],
    }
    if tools is not None:
        body["tools"] = tools
    return Seen("openai", model, ts, segments_for("openai", "/v1/chat/completions", body))


def test_gpt56_codex_pattern_names_the_missing_head_breakpoint_before_and_after_the_response():
    from analyzer.diagnose import settle

    prev = g56(("developer", DEV, False), ("user", "Fix the failing test.", False))
    cur = g56(("developer", DEV, False), ("user", "Now add a test for empty input.", False), ts=20.0)
    before = diagnose(cur, prev, cached_tokens=None)  # visible in the request: the header names it
    assert before.reason == "no-breakpoint-at-head"
    assert before.header() == "no-breakpoint-at-head; path=messages[0]"
    assert "implicit one is at messages[1]" in before.detail
    assert settle(cur, prev, before, 0) == diagnose(cur, prev, cached_tokens=0) == before
    # the same prompt on gpt-5.5 caches automatically: a repeat not read is just not-cached
    old = lambda q, ts: g56(("developer", DEV, False), ("user", q, False), ts=ts, model="gpt-5.5")
    assert diagnose(old("b", 20.0), old("a", 0.0), cached_tokens=None) is None
    assert diagnose(old("b", 20.0), old("a", 0.0), cached_tokens=0).reason == "not-cached"


def test_gpt56_head_covered_by_a_marker_or_by_the_last_turn_is_no_head_miss():
    marked = lambda q, ts=0.0: g56(("developer", DEV, True), ("user", q, False), ts=ts)
    assert diagnose(marked("b", 20.0), marked("a"), cached_tokens=None) is None
    assert diagnose(marked("b", 20.0), marked("a"), cached_tokens=2300) is None  # read in full
    # a conversation that grows: the earlier request's implicit breakpoint (its last message) is read
    prev = g56(("developer", DEV, False), ("user", "q1", False))
    cur = g56(
        ("developer", DEV, False),
        ("user", "q1", False),
        ("assistant", "a1", False),
        ("user", "q2", False),
        ts=20.0,
    )
    assert diagnose(cur, prev, cached_tokens=None) is None
    assert diagnose(cur, prev, cached_tokens=0).reason == "not-cached"  # readable, yet nothing read
    # a short head is no head problem (below the minimum)
    short = lambda q, ts=0.0: g56(("developer", "Be brief.", False), ("user", q, False), ts=ts)
    assert diagnose(short("b", 5.0), short("a"), cached_tokens=None).reason == "below-minimum"


def test_gpt56_head_marked_but_not_written_and_a_marker_short_of_the_head():
    # an app that marks its head and every turn: the earlier conversation's 4 later markers are
    # the ones written, so a new conversation on the same head finds the head's marker unwritten
    prev = g56(
        ("developer", DEV, True),
        ("user", "a1", True),
        ("assistant", "r1", True),
        ("user", "a2", True),
        ("assistant", "r2", True),
    )
    cur = g56(("developer", DEV, True), ("user", "b1", True), ts=20.0)
    found = diagnose(cur, prev, cached_tokens=None)
    assert (
        found.reason == "breakpoint-not-written"
        and found.header() == "breakpoint-not-written; path=messages[0]"
    )
    assert found.detail == "5 breakpoints marked; only the latest 4 are written"
    # a marker on the system message, then a long unmarked developer message in the head
    prev = g56(("system", DEV, True), ("developer", DEV, False), ("user", "a", False))
    cur = g56(("system", DEV, True), ("developer", DEV, False), ("user", "b", False), ts=20.0)
    found = diagnose(cur, prev, cached_tokens=None)
    assert found.reason == "no-breakpoint-at-head" and found.path == "messages[1]"
    assert diagnose(cur, prev, cached_tokens=2300) == found  # part read: the rest of the head missed


def test_gpt56_breakpoint_reasons_settle_like_the_other_repeat_reasons():
    from analyzer.diagnose import REPEAT_REASONS

    assert {"no-breakpoint-at-head", "breakpoint-not-written"} <= REPEAT_REASONS


def test_gpt56_responses_instructions_are_a_head_that_can_end_at_a_breakpoint():
    def resp(question: str, ts: float = 0.0) -> Seen:
        body = {"model": "gpt-5.6-sol", "instructions": DEV, "input": question}
        return Seen("openai", "gpt-5.6-sol", ts, segments_for("openai", "/v1/responses", body))

    found = diagnose(resp("b", 20.0), resp("a"), cached_tokens=0)
    assert found.header() == "no-breakpoint-at-head; path=instructions"
