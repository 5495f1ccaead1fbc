"""OpenAI's automatic prompt caching in the emulator: 1024-token minimum, 128-token steps, TTL."""

from __future__ import annotations

import pytest

from analyzer.tokens import estimate_tokens
from proxy.emulator.openai_cache import apply_openai_cache, rendered_prompt
from proxy.emulator.provider_cache import ProviderCache, key_id

ROUTE = "/v1/chat/completions"


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def body(system: str, user: str = "question", **extra) -> dict:
    return {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        **extra,
    }


def common_bytes(a: bytes, b: bytes) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock) -> ProviderCache:
    return ProviderCache(10_000, clock)


def run(store: ProviderCache, b: dict, key: str = "sk-a", ttl: float = 600.0):
    return apply_openai_cache(store, key_id(key), b["model"], rendered_prompt(ROUTE, b), ttl)


def test_short_prompt_is_never_cached(store):
    b = body("x" * 3000)  # < 1024 tokens
    first, second = run(store, b), run(store, b)
    assert first.prompt_tokens == estimate_tokens(len(rendered_prompt(ROUTE, b))) < 1024
    assert (first.cached_tokens, second.cached_tokens) == (0, 0)


def test_repeat_hits_in_128_token_steps(store):
    b = body("policy text " * 500)
    first, second = run(store, b), run(store, b)
    assert first.cached_tokens == 0
    assert second.prompt_tokens == first.prompt_tokens > 1024
    assert second.cached_tokens == (second.prompt_tokens - 1) // 128 * 128
    assert second.cached_tokens % 128 == 0 and second.cached_tokens >= 1024


def test_shared_prefix_counts_whole_blocks_of_the_common_bytes(store):
    a, b = (
        body("shared " * 1000, "first question"),
        body("shared " * 1000 + "and a different tail " * 40, "second"),
    )
    run(store, a)
    hit = run(store, b)
    common = common_bytes(rendered_prompt(ROUTE, a), rendered_prompt(ROUTE, b))
    assert hit.cached_tokens == (common // 512) * 128
    assert 1024 <= hit.cached_tokens < hit.prompt_tokens


def test_common_prefix_under_1024_tokens_is_a_miss(store):
    a, b = body("p" * 3900 + "A" * 2000), body("p" * 3900 + "B" * 2000)
    run(store, a)
    assert estimate_tokens(common_bytes(rendered_prompt(ROUTE, a), rendered_prompt(ROUTE, b))) < 1024
    assert run(store, b).cached_tokens == 0


def test_different_key_or_model_misses(store):
    b = body("tenant data " * 500)
    run(store, b, key="sk-a")
    assert run(store, b, key="sk-b").cached_tokens == 0
    assert run(store, {**b, "model": "gpt-4o-mini"}, key="sk-a").cached_tokens == 0
    assert run(store, b, key="sk-a").cached_tokens > 0


def test_ttl_expiry_and_refresh_on_use(store, clock):
    b = body("ttl check " * 500)
    run(store, b)
    clock.t += 599
    assert run(store, b).cached_tokens > 0  # a read refreshes the entry
    clock.t += 599
    assert run(store, b).cached_tokens > 0
    clock.t += 601
    assert run(store, b).cached_tokens == 0


def test_store_lru_bound_evicts_oldest(clock):
    small = ProviderCache(8, clock)  # fewer entries than one prompt's blocks
    b = body("evicted " * 600)
    run(small, b)
    assert len(small) == 8
    assert run(small, b).cached_tokens == 0
