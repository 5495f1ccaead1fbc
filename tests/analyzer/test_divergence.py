"""The divergence engine: shared lengths, the first differing segment with its byte offset and
reason, and the differing string with the volatile value in it."""

from __future__ import annotations

import random

from analyzer.divergence import (
    CAUSES,
    MIN_SIMILARITY,
    common_prefix_len,
    fork,
    shared_segments,
    text_fork,
    volatile_at,
)
from analyzer.segments import segments_for

SYSTEM = "You are the support assistant of ACME. Answer briefly and cite the policy. " * 10


def chat(system: str, *turns: str, tools=None) -> tuple[dict, list]:
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": system}] + [{"role": "user", "content": t} for t in turns],
    }
    if tools is not None:
        body["tools"] = tools
    return body, segments_for("openai", "/v1/chat/completions", body)


def naive(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_common_prefix_len_on_bytes_text_and_tuples():
    rng = random.Random(3)
    for _ in range(300):
        base = [rng.choice("ab\x00é") for _ in range(rng.randrange(0, 60))]
        other = list(base)
        if other and rng.random() < 0.8:
            other[rng.randrange(len(other))] = "z"
        other = other[: rng.randrange(0, len(other) + 1)] if rng.random() < 0.3 else other
        for a, b in [
            ("".join(base), "".join(other)),
            ("".join(base).encode(), "".join(other).encode()),
            (tuple(base), tuple(other)),
        ]:
            assert common_prefix_len(a, b) == naive(a, b) == common_prefix_len(b, a)


def test_fork_names_the_segment_the_offset_and_the_reason():
    _, prev = chat(f"Now: 10:00:01. {SYSTEM}", "hi")
    _, cur = chat(f"Now: 10:00:59. {SYSTEM}", "hi")
    found = fork(prev, cur)
    assert (found.segment, found.path, found.reason) == (0, "messages[0]", "volatile-time")
    assert (
        cur[0].body[: found.offset] == prev[0].body[: found.offset]
        and cur[0].body[found.offset] != prev[0].body[found.offset]
    )
    assert shared_segments(cur, prev) == 0


def test_a_new_turn_and_a_prefix_are_not_causes():
    _, prev = chat(SYSTEM, "one")
    _, cur = chat(SYSTEM, "two")
    assert fork(prev, cur).reason is None and fork(prev, cur).segment == 1
    _, longer = chat(SYSTEM, "one", "more")
    assert fork(prev, longer) is None and shared_segments(longer, prev) == 2


def test_tool_order_is_told_apart_from_a_changed_tool():
    a = {"type": "function", "function": {"name": "a"}}
    b = {"type": "function", "function": {"name": "b"}}
    _, prev = chat(SYSTEM, "q", tools=[a, b])
    assert fork(prev, chat(SYSTEM, "q", tools=[b, a])[1]).reason == "tool-order"
    assert fork(prev, chat(SYSTEM, "q", tools=[a, {**b, "x": 1}])[1]).reason == "tools-changed"


def test_text_fork_locates_the_value_inside_the_string():
    head = "Current time: "
    body_a, segs_a = chat(f"{head}10:00:01 UTC. {SYSTEM}", "hi")
    body_b, segs_b = chat(f"{head}10:00:59 UTC. {SYSTEM}", "hi")
    found = text_fork(body_a, segs_a, body_b, segs_b)
    assert found.field == "messages[0].content" and found.kind == "time" and found.at == len(head)
    assert found.offset == len(head) + 6 and found.similarity > MIN_SIMILARITY
    assert CAUSES[found.kind] == "time of day" and CAUSES["content"] == "changed content"
    assert text_fork(body_a, segs_a, body_a, segs_a) is None


def test_volatile_at_looks_a_little_ahead_only_when_asked():
    text = "ticket 1b4e28ba-2fa1-11d2-883f-0016d3cca427 please"
    assert volatile_at(text, 10).kind == "uuid"
    assert volatile_at(text, 5).kind == "uuid"  # two characters before the value: counted
    assert volatile_at(text, 5, lead=0) is None
    assert volatile_at(text, 2) is None
