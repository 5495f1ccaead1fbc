"""Anthropic's explicit prompt caching in the emulator: breakpoints, minimums, TTLs, lookback."""

from __future__ import annotations

import pytest

from analyzer.cache_rules import anthropic_min_tokens as min_cacheable_tokens
from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from proxy.emulator.anthropic_cache import CacheRuleError, apply_anthropic_cache
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.provider_cache import ProviderCache, key_id

ROUTE = "/v1/messages"
CC = {"type": "ephemeral"}
CC_1H = {"type": "ephemeral", "ttl": "1h"}


class FakeClock:
    def __init__(self) -> None:
        self.t = 5_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def config(clock) -> EmulatorConfig:
    return EmulatorConfig(clock=clock)


@pytest.fixture
def store(clock) -> ProviderCache:
    return ProviderCache(10_000, clock)


def block(text: str, cc: dict | None = None) -> dict:
    return {"type": "text", "text": text, **({"cache_control": cc} if cc else {})}


def req(
    system: list[dict], messages: list[dict] | None = None, model: str = "claude-sonnet-4-6", **extra
) -> dict:
    return {
        "model": model,
        "max_tokens": 8,
        "system": system,
        "messages": messages or [{"role": "user", "content": "hello"}],
        **extra,
    }


def through(body: dict, index: int) -> int:
    """Estimated tokens in segments 0..index (an independent sum over the rendered bytes)."""
    return estimate_tokens(sum(len(s.data) for s in segments_for("anthropic", ROUTE, body)[: index + 1]))


def total(body: dict) -> int:
    return estimate_tokens(sum(len(s.data) for s in segments_for("anthropic", ROUTE, body)))


def run(store, config, body, key="sk-ant-a"):
    return apply_anthropic_cache(store, config, key_id(key), ROUTE, body)


def test_minimums_table():
    assert min_cacheable_tokens("claude-sonnet-4-6") == 1024
    assert min_cacheable_tokens("claude-opus-4-5-20251101") == 4096
    assert min_cacheable_tokens("claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("claude-3-5-haiku-latest") == 2048
    assert min_cacheable_tokens("some-unknown-model") == 1024


def test_write_then_read_at_breakpoint(store, config):
    body = req([block("stable instructions " * 300, CC)])
    first, second = run(store, config, body), run(store, config, body)
    assert first.cache_creation_5m == through(body, 0) >= 1024
    assert (first.cache_read_input_tokens, first.cache_creation_1h) == (0, 0)
    assert first.input_tokens == total(body) - through(body, 0) > 0  # excludes the cache write
    assert second.cache_read_input_tokens == through(body, 0)
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == first.input_tokens
    assert second.total_prompt_tokens == total(body)


def test_no_breakpoint_no_caching(store, config):
    body = req([block("stable instructions " * 300)])
    run(store, config, body)
    again = run(store, config, body)
    assert (again.cache_read_input_tokens, again.cache_creation_input_tokens, again.input_tokens) == (
        0,
        0,
        total(body),
    )


def test_prefix_below_model_minimum_is_neither_written_nor_read(store, config):
    body = req([block("mid-size prompt " * 400, CC)], model="claude-haiku-4-5")  # ~1600 tokens < 4096
    assert 1024 < through(body, 0) < 4096
    for _ in range(2):
        u = run(store, config, body)
        assert (u.cache_read_input_tokens, u.cache_creation_input_tokens) == (0, 0)
    sonnet = {**body, "model": "claude-sonnet-4-6"}  # same prompt, 1024 minimum: cached
    assert run(store, config, sonnet).cache_creation_input_tokens == through(body, 0)
    short = req([block("x" * 4000, CC)])  # ~1010 tokens through the breakpoint: under 1024
    assert through(short, 0) < 1024
    run(store, config, short)
    assert run(store, config, short).cache_read_input_tokens == 0


def test_five_breakpoints_is_an_error(store, config):
    body = req([block(f"part {i} " * 10, CC) for i in range(5)])
    with pytest.raises(CacheRuleError, match="maximum of 4"):
        run(store, config, body)
    assert len(store) == 0


def test_1h_after_5m_is_an_error(store, config):
    body = req([block("a " * 3000, CC), block("b " * 3000, CC_1H)])
    with pytest.raises(CacheRuleError, match="1h"):
        run(store, config, body)


def test_1h_then_5m_writes_are_split_by_ttl(store, config, clock):
    body = req([block("tools-like prefix " * 300, CC_1H), block("daily context " * 300, CC)])
    first = run(store, config, body)
    assert first.cache_creation_1h == through(body, 0)
    assert first.cache_creation_5m == through(body, 1) - through(body, 0)
    assert first.input_tokens == total(body) - through(body, 1)
    clock.t += 301  # the 5m entry expired, the 1h one lives
    later = run(store, config, body)
    assert later.cache_read_input_tokens == through(body, 0)
    assert later.cache_creation_5m == through(body, 1) - through(body, 0)
    assert later.cache_creation_1h == 0
    clock.t += 3601
    assert run(store, config, body).cache_read_input_tokens == 0


def test_reads_refresh_the_5m_ttl(store, config, clock):
    body = req([block("refreshed " * 500, CC)])
    run(store, config, body)
    for _ in range(3):
        clock.t += 250
        assert run(store, config, body).cache_read_input_tokens == through(body, 0)
    clock.t += 301
    assert run(store, config, body).cache_read_input_tokens == 0


def test_lookback_finds_an_earlier_boundary(store, config):
    system = [block("shared system prompt " * 300, CC)]
    run(store, config, req(system))
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(9)]
    turns[-1] = {"role": "user", "content": [block("latest turn", CC)]}
    grown = req([block("shared system prompt " * 300)], turns)  # only the last block is marked
    u = run(store, config, grown)
    assert u.cache_read_input_tokens == through(grown, 0)
    last = len(segments_for("anthropic", ROUTE, grown)) - 1
    assert u.cache_creation_5m == through(grown, last) - through(grown, 0)


def test_lookback_stops_after_20_blocks(store, config):
    run(store, config, req([block("shared system prompt " * 300, CC)]))
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(24)]
    turns.append({"role": "user", "content": [block("latest turn", CC)]})
    u = run(store, config, req([block("shared system prompt " * 300)], turns))
    assert u.cache_read_input_tokens == 0
    assert u.cache_creation_5m > 0


def test_top_level_cache_control_marks_the_last_block(store, config):
    body = req([block("automatic caching " * 300)], cache_control=CC)
    first, second = run(store, config, body), run(store, config, body)
    assert first.cache_creation_5m == total(body)
    assert second.cache_read_input_tokens == total(body) and second.input_tokens == 0


def test_keys_and_models_do_not_share_caches(store, config):
    body = req([block("private " * 600, CC)])
    run(store, config, body, key="sk-ant-a")
    assert run(store, config, body, key="sk-ant-b").cache_read_input_tokens == 0
    assert (
        run(store, config, {**body, "model": "claude-opus-4-1"}, key="sk-ant-a").cache_read_input_tokens == 0
    )
    assert run(store, config, body, key="sk-ant-a").cache_read_input_tokens > 0
