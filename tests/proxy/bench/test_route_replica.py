"""The fake engine over a real loopback server, through the openai SDK: a limited LRU prefix cache
reported as cached tokens, and a time to first token that grows with what it missed."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from proxy.bench.route_replica import BLOCK_TOKENS, MODEL, FakeEngine, create_app, main
from tests.support.servers import serve

SYSTEM_A = "alpha " * 800  # 4,800 bytes: 1,200 tokens
SYSTEM_B = "bravo " * 800


def ask(client: openai.OpenAI, system: str, user: str, stream: bool = False):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    began = time.perf_counter()
    if not stream:
        reply = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=2)
        return reply.usage, time.perf_counter() - began
    usage, first = None, None
    for chunk in client.chat.completions.create(
        model=MODEL, messages=messages, max_tokens=2, stream=True, stream_options={"include_usage": True}
    ):
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - began
        usage = chunk.usage or usage
    return usage, first


def test_repeats_are_cached_until_the_lru_evicts_them():
    engine = FakeEngine(capacity_tokens=2 * 1300, base_ms=0, per_token_us=0, decode_ms=0)
    with serve(create_app(engine)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        first, _ = ask(client, SYSTEM_A, "one")
        assert first.prompt_tokens_details.cached_tokens == 0
        again, _ = ask(client, SYSTEM_A, "two", stream=True)
        cached = again.prompt_tokens_details.cached_tokens
        assert 1200 - BLOCK_TOKENS <= cached <= 1200 and cached % BLOCK_TOKENS == 0
        ask(client, SYSTEM_B, "one")  # two prompts fit
        assert ask(client, SYSTEM_A, "three")[0].prompt_tokens_details.cached_tokens == cached
        ask(client, "charlie " * 800, "one")  # a third evicts the least recently used: B
        assert ask(client, SYSTEM_B, "two")[0].prompt_tokens_details.cached_tokens == 0
        stats = httpx.get(f"{url}/_replica/stats").json()
        assert stats["evicted_blocks"] > 0 and stats["cached_blocks"] <= stats["capacity_blocks"]


def test_time_to_first_token_grows_with_uncached_tokens():
    engine = FakeEngine(capacity_tokens=20_000, base_ms=1, per_token_us=100, decode_ms=0)
    with serve(create_app(engine)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        _, cold = ask(client, SYSTEM_A, "one", stream=True)
        _, warm = ask(client, SYSTEM_A, "two", stream=True)
        assert cold >= 0.12  # 1,200 uncached tokens × 100 µs
        assert warm < cold / 2


def test_bad_requests_get_an_openai_error_and_health_answers():
    with serve(create_app(FakeEngine(1000))) as url:
        bad = httpx.post(f"{url}/v1/chat/completions", content=b"{nope")
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        missing = httpx.post(f"{url}/v1/chat/completions", json={"model": MODEL})
        assert missing.status_code == 400
        assert httpx.get(f"{url}/health").json() == {"status": "ok"}
        assert httpx.get(f"{url}/v1/models").json()["data"][0]["id"] == MODEL


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="capacity_tokens"):
        FakeEngine(8)
    with pytest.raises(SystemExit):
        main(["--port", "1", "--capacity-tokens", "4"])
