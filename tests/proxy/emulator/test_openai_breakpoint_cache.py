"""OpenAI GPT-5.6+ caching in the emulator: breakpoints written, candidates read exactly, writes billed, TTLs."""

from __future__ import annotations

import pytest

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from proxy.emulator.openai_breakpoint_cache import apply_breakpoints, plan
from proxy.emulator.openai_options import CacheOptions
from proxy.emulator.provider_cache import ProviderCache, key_id

ROUTE = "/v1/chat/completions"
MODEL = "gpt-5.6-terra"
MARK = {"mode": "explicit"}
BIG = "The repository rules, tools and conventions, written out in full. " * 80  # ~1,330 tokens


class FakeClock:
    def __init__(self) -> None:
        self.t = 2_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock) -> ProviderCache:
    return ProviderCache(10_000, clock)


def msg(role: str, t: str, mark: dict | None = None) -> dict:
    part = {"type": "text", "text": t, **({"prompt_cache_breakpoint": mark} if mark else {})}
    return {"role": role, "content": [part]}


def body(*messages: dict, **extra) -> dict:
    return {"model": MODEL, "messages": list(messages), **extra}


def segs(b: dict):
    return segments_for("openai", ROUTE, b)


def through(b: dict, i: int) -> int:
    """Tokens of segments 0..i, summed independently of the chain."""
    return estimate_tokens(sum(len(s.data) for s in segs(b)[: i + 1]))


def run(store, b: dict, options: CacheOptions = CacheOptions(), key: str = "sk-a", model: str = MODEL):
    return apply_breakpoints(store, key_id(key), model, segs(b), options)


def test_plan_implicit_takes_the_latest_three_markers_explicit_the_latest_four():
    b = body(*(msg("user", f"part {i}", MARK) for i in range(6)), msg("user", "newest"))
    implicit = plan(segs(b), CacheOptions())
    assert implicit.writes == {3: "30m", 4: "30m", 5: "30m", 6: "30m"}  # markers 3..5 + the implicit one at 6
    assert plan(segs(b), CacheOptions("explicit")).writes == {2: "30m", 3: "30m", 4: "30m", 5: "30m"}
    assert implicit.candidates == tuple(range(7))
    assert plan(segs(body(msg("user", "a"), msg("user", "b"))), CacheOptions("explicit")).writes == {}


def test_the_implicit_breakpoint_keeps_the_longer_ttl_when_a_marker_sits_there_too():
    b = body(msg("user", "a"), msg("user", "b", {"mode": "explicit", "ttl": "12h"}))
    assert plan(segs(b), CacheOptions()).writes == {1: "12h"}


def test_without_markers_only_the_whole_prompt_is_written_so_a_new_user_message_misses(store):
    first = run(store, body(msg("developer", BIG), msg("user", "task one")))
    assert (first.cached_tokens, first.cache_write_tokens) == (0, first.prompt_tokens)
    second = run(store, body(msg("developer", BIG), msg("user", "task two")))
    assert second.cached_tokens == 0 and second.cache_write_tokens == second.prompt_tokens


def test_a_marked_developer_message_is_read_exactly_at_its_end(store):
    a = body(msg("developer", BIG, MARK), msg("user", "task one"))
    b = body(msg("developer", BIG, MARK), msg("user", "task two, a little longer"))
    run(store, a)
    hit = run(store, b)
    assert hit.cached_tokens == through(b, 0) and hit.cached_tokens % 128 != 0  # no 128-token rounding
    assert hit.cache_write_tokens == hit.prompt_tokens - hit.cached_tokens  # the implicit one at the end
    assert hit.breakpoints and hit.cache_write_12h_tokens == 0


def test_the_agent_loop_reads_the_previous_turns_implicit_breakpoint(store):
    turn1 = [msg("developer", BIG), msg("user", "fix the bug")]
    run(store, body(*turn1))
    turn2 = body(*turn1, msg("assistant", "done: patched"), msg("user", "now add a test"))
    hit = run(store, turn2)
    assert hit.cached_tokens == through(turn2, 1)
    assert hit.cache_write_tokens == hit.prompt_tokens - hit.cached_tokens


def test_explicit_mode_without_markers_caches_nothing(store):
    b = body(msg("developer", BIG), msg("user", "same"))
    for _ in range(2):
        r = run(store, b, CacheOptions("explicit"))
        assert (r.cached_tokens, r.cache_write_tokens) == (0, 0)
    assert len(store) == 0
    assert run(store, b).cache_write_tokens > 0  # the same body in implicit mode does write


def test_only_the_latest_four_markers_are_written(store):
    parts = [msg("user", f"{i} " + BIG, MARK) for i in range(6)]
    b = body(*parts)
    r = run(store, b, CacheOptions("explicit"))
    assert r.cache_write_tokens == through(b, 5)
    assert len(store) == 4
    # marker 1 (never written) is the longest a shorter request could match: a miss
    assert run(store, body(*parts[:2], msg("user", "other")), CacheOptions("explicit")).cached_tokens == 0
    assert run(
        store, body(*parts[:3], msg("user", "other")), CacheOptions("explicit")
    ).cached_tokens == through(b, 2)


def test_a_breakpoint_under_1024_tokens_is_neither_written_nor_read(store):
    small = body(msg("developer", "short rules " * 100, MARK), msg("user", "q"))
    assert through(small, 1) < 1024
    assert run(store, small).cache_write_tokens == 0 and len(store) == 0
    assert run(store, small).cached_tokens == 0


def test_only_the_latest_80_candidates_are_looked_up(store):
    run(store, body(msg("developer", BIG), msg("user", "start")))
    tail = [msg("user" if i % 2 else "assistant", f"turn {i}") for i in range(79)]
    near = body(
        msg("developer", BIG), msg("user", "start"), *tail
    )  # 81 messages: index 1 is the 80th from the end
    assert run(store, near).cached_tokens == through(near, 1)
    store.clear()
    run(store, body(msg("developer", BIG), msg("user", "start")))
    far = body(
        msg("developer", BIG), msg("user", "start"), *tail, msg("user", "one more")
    )  # index 1 is the 81st
    assert run(store, far).cached_tokens == 0


def test_ttls_30m_and_12h_and_the_split_of_writes(store, clock):
    b = body(msg("developer", BIG, {"mode": "explicit", "ttl": "12h"}), msg("user", "task"))
    first = run(store, b)
    assert first.cache_write_12h_tokens == through(b, 0)
    assert first.cache_write_30m_tokens == first.prompt_tokens - through(b, 0)
    clock.t += 1801  # the 30m implicit entry is gone, the 12h one lives
    again = run(store, b)
    assert again.cached_tokens == through(b, 0)
    clock.t += 12 * 3600 + 1
    assert (
        run(
            store, body(msg("developer", BIG, {"mode": "explicit", "ttl": "12h"}), msg("user", "x"))
        ).cached_tokens
        == 0
    )


def test_the_request_ttl_applies_to_unmarked_ttls(store, clock):
    b = body(msg("developer", BIG, MARK), msg("user", "task"), prompt_cache_options={"ttl": "12h"})
    r = run(store, b, CacheOptions("implicit", "12h"))
    assert r.cache_write_12h_tokens == r.cache_write_tokens == r.prompt_tokens


def test_key_and_model_are_separate_caches(store):
    b = body(msg("developer", BIG), msg("user", "same"))
    run(store, b)
    assert run(store, b, key="sk-b").cached_tokens == 0
    assert run(store, b, model="gpt-5.6-sol").cached_tokens == 0
    assert run(store, b).cached_tokens == through(b, 1)


def test_a_breakpoint_below_the_prefix_read_bills_no_write(store):
    marked = msg("developer", BIG, {"mode": "explicit", "ttl": "12h"})
    run(store, body(marked, msg("user", "first")))
    grown = body(marked, msg("user", "first"), msg("assistant", "ok"), msg("user", "second"))
    r = run(store, grown)
    assert r.cached_tokens == through(grown, 1)
    assert (r.cache_write_12h_tokens, r.cache_write_30m_tokens) == (0, through(grown, 3) - through(grown, 1))
