"""Gemini in the emulator: implicit caching (per-model minimum, 2.5+ only, TTL), its wire
format (plain, SSE with CRLF frames, the JSON-array stream) and its error shape, driven by
the official google-genai SDK where it can be."""

from __future__ import annotations

import httpx
import orjson
import pytest
from google import genai
from google.genai import types

from proxy.emulator import EmulatorConfig, create_app
from proxy.emulator.gemini_implicit_cache import apply_gemini_cache, rendered_prompt
from proxy.emulator.provider_cache import ProviderCache, key_id
from tests.support.servers import serve

SYSTEM = (
    "You are the billing assistant. Policy: refunds within 30 days; no exceptions. " * 120
)  # ~9.6 KB ≈ 2400 tokens


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def body(system: str = SYSTEM, user: str = "question") -> dict:
    return {
        "systemInstruction": {"parts": [{"text": system}]},
        "contents": [{"role": "user", "parts": [{"text": user}]}],
    }


def test_implicit_caching_minimums_models_and_ttl():
    clock = FakeClock()
    store, key = ProviderCache(1000, clock), key_id("k")
    prompt = rendered_prompt(body())
    assert apply_gemini_cache(store, key, "gemini-2.5-flash", prompt, 300).cached_tokens == 0
    hit = apply_gemini_cache(store, key, "gemini-2.5-flash", rendered_prompt(body(user="another")), 300)
    assert 2048 <= hit.cached_tokens < hit.prompt_tokens and hit.cached_tokens % 128 == 0
    assert (
        apply_gemini_cache(store, key_id("other"), "gemini-2.5-flash", prompt, 300).cached_tokens == 0
    )  # per key
    # 4,096 for later models: the same ~2400-token prompt never hits there
    for _ in range(2):
        assert apply_gemini_cache(store, key, "gemini-3.5-flash", prompt, 300).cached_tokens == 0
    for _ in range(2):  # no implicit caching before 2.5
        assert apply_gemini_cache(store, key, "gemini-2.0-flash", prompt, 300).cached_tokens == 0
    clock.t += 301
    assert apply_gemini_cache(store, key, "gemini-2.5-flash", prompt, 300).cached_tokens == 0  # expired


@pytest.mark.e2e
def test_the_sdk_reads_usage_and_streams():
    with serve(create_app(EmulatorConfig())) as url:
        client = genai.Client(api_key="AIza-emu", http_options=types.HttpOptions(base_url=url))
        config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=6)
        first = client.models.generate_content(
            model="gemini-2.5-flash", contents="hello world", config=config
        )
        second = client.models.generate_content(
            model="gemini-2.5-flash", contents="hello world", config=config
        )
        chunks = list(
            client.models.generate_content_stream(
                model="gemini-2.5-flash", contents="hello world", config=config
            )
        )
        sse = httpx.post(
            f"{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            json=body(),
            headers={"x-emulator-chunks": "3"},
        )
        array = httpx.post(
            f"{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-emu",
            json=body(),
            headers={"x-emulator-chunks": "3"},
        )
        errors = [
            httpx.post(f"{url}/v1beta/models/gemini-2.5-flash:generateContent", json={}),
            httpx.post(f"{url}/v1beta/models/gemini-2.5-flash:generateContent", content=b"{x"),
            httpx.post(f"{url}/v1beta/models/gemini-2.5-flash:doThings", json=body()),
            httpx.post(
                f"{url}/v1beta/models/gemini-2.5-flash:generateContent",
                json=body(),
                headers={"x-emulator-status": "429"},
            ),
        ]
        listed = httpx.get(f"{url}/v1beta/models").json()
    meta = second.usage_metadata
    assert (
        first.usage_metadata.cached_content_token_count is None
        and first.usage_metadata.candidates_token_count == 6
    )
    assert (
        meta.cached_content_token_count >= 2048
        and meta.prompt_token_count == first.usage_metadata.prompt_token_count
    )
    assert (
        meta.total_token_count == meta.prompt_token_count + 6
        and len(second.text) == 24
        and "hello" in second.text
    )
    assert (
        "".join(c.text for c in chunks) == second.text
        and chunks[-1].usage_metadata.candidates_token_count == 6
    )
    assert (
        sse.headers["content-type"].startswith("text/event-stream")
        and sse.text.count("data: ") == 3
        and sse.text.endswith("\r\n\r\n")
    )
    events = [orjson.loads(e[len("data: ") :]) for e in sse.text.split("\r\n\r\n") if e]
    assert [e["candidates"][0].get("finishReason") for e in events] == [None, None, "STOP"]
    assert (
        "candidatesTokenCount" in events[-1]["usageMetadata"]
        and "candidatesTokenCount" not in events[0]["usageMetadata"]
    )
    parsed = orjson.loads(array.content)
    assert (
        array.headers["content-type"] == "application/json"
        and len(parsed) == 3
        and parsed[-1]["usageMetadata"]["cachedContentTokenCount"] >= 2048
    )
    assert [(r.status_code, r.json()["error"]["status"]) for r in errors] == [
        (400, "INVALID_ARGUMENT"),
        (400, "INVALID_ARGUMENT"),
        (404, "NOT_FOUND"),
        (429, "RESOURCE_EXHAUSTED"),
    ]
    assert "models/gemini-2.5-flash" in [m["name"] for m in listed["models"]]
