"""Gemini's explicit caches in the emulator, driven by the official google-genai SDK
(``client.caches.create/get/update/list/delete``) and raw HTTP for the error shapes:
per-key scoping, expiry on the clock, and generateContent reading a cache."""

from __future__ import annotations

import httpx
import pytest
from google import genai
from google.genai import errors, types

from proxy.emulator import EmulatorConfig, create_app
from proxy.emulator.gemini_cached_contents import parse_time, parse_ttl, rfc3339
from tests.support.servers import serve

SYSTEM = (
    "You are the billing assistant. Policy: refunds within 30 days; no exceptions. " * 120
)  # ≈ 2400 tokens
DOC = [
    types.Content(role="user", parts=[types.Part(text="Contract text, clause after clause. " * 40)]),
    types.Content(role="model", parts=[types.Part(text="Noted.")]),
]


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def test_durations_and_times_parse():
    assert (
        parse_ttl("300s") == 300
        and parse_ttl("1.5s") == 1.5
        and parse_ttl("300") is None
        and parse_ttl(300) is None
    )
    assert parse_time(rfc3339(1_800_000_000.25)) == pytest.approx(1_800_000_000.25)


@pytest.mark.e2e
def test_sdk_create_get_update_list_delete_and_read():
    clock = FakeClock()
    with serve(create_app(EmulatorConfig(clock=clock))) as url:
        client = genai.Client(api_key="AIza-owner", http_options=types.HttpOptions(base_url=url))
        other = genai.Client(api_key="AIza-other", http_options=types.HttpOptions(base_url=url))
        cache = client.caches.create(
            model="gemini-2.5-flash",
            config=types.CreateCachedContentConfig(
                system_instruction=SYSTEM, contents=DOC, ttl="600s", display_name="billing"
            ),
        )
        assert (
            cache.name.startswith("cachedContents/")
            and cache.model == "models/gemini-2.5-flash"
            and cache.display_name == "billing"
        )
        assert cache.usage_metadata.total_token_count >= 2048
        assert (cache.expire_time - cache.create_time).total_seconds() == pytest.approx(600)
        assert client.caches.get(name=cache.name).name == cache.name
        with pytest.raises(errors.ClientError) as denied:  # another key: 403, as Google answers
            other.caches.get(name=cache.name)
        assert denied.value.code == 403 and "CachedContent not found" in denied.value.message
        assert [c.name for c in client.caches.list()] == [cache.name] and list(other.caches.list()) == []

        # generateContent with the cache == the same request with the parts inline
        config = types.GenerateContentConfig(cached_content=cache.name, max_output_tokens=6)
        hit = client.models.generate_content(
            model="gemini-2.5-flash", contents="What is the refund window?", config=config
        )
        inline = client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[
                *DOC,
                types.Content(role="user", parts=[types.Part(text="What is the refund window?")]),
            ],
            config=types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=6),
        )
        assert hit.text == inline.text
        assert hit.usage_metadata.cached_content_token_count == cache.usage_metadata.total_token_count
        assert hit.usage_metadata.prompt_token_count == inline.usage_metadata.prompt_token_count
        with pytest.raises(errors.ClientError) as both:  # a cache plus a systemInstruction: Google's 400
            client.models.generate_content(
                model="gemini-2.5-flash",
                contents="x",
                config=types.GenerateContentConfig(cached_content=cache.name, system_instruction="s"),
            )
        assert both.value.code == 400 and "CachedContent can not be used" in both.value.message
        with pytest.raises(errors.ClientError) as wrong_key:
            other.models.generate_content(model="gemini-2.5-flash", contents="x", config=config)
        assert wrong_key.value.code == 403

        clock.t += 500
        updated = client.caches.update(name=cache.name, config=types.UpdateCachedContentConfig(ttl="900s"))
        assert updated.expire_time.timestamp() == pytest.approx(clock.t + 900)
        clock.t += 901  # expired: gone
        with pytest.raises(errors.ClientError) as gone:
            client.caches.get(name=cache.name)
        assert gone.value.code == 404
        with pytest.raises(errors.ClientError):
            client.models.generate_content(model="gemini-2.5-flash", contents="x", config=config)

        again = client.caches.create(
            model="gemini-2.5-flash", config=types.CreateCachedContentConfig(system_instruction=SYSTEM)
        )
        assert (again.expire_time - again.create_time).total_seconds() == pytest.approx(
            3600
        )  # Google's default: 1 h
        client.caches.delete(name=again.name)
        assert list(client.caches.list()) == []
        counts = httpx.get(f"{url}/_emulator/requests").json()["cached_contents"]
        assert counts == {"live": 0, "created": 2, "updated": 1, "deleted": 1, "reads": 1}


@pytest.mark.e2e
def test_bad_creates_and_updates():
    with serve(create_app(EmulatorConfig())) as url:
        post = lambda body: httpx.post(
            f"{url}/v1beta/cachedContents", json=body, headers={"x-goog-api-key": "k"}
        )
        small = post(
            {"model": "models/gemini-2.5-flash", "systemInstruction": {"parts": [{"text": "short"}]}}
        )
        no_model = post({"contents": []})
        bad_ttl = post(
            {
                "model": "gemini-2.5-flash",
                "systemInstruction": {"parts": [{"text": SYSTEM}]},
                "ttl": "ten minutes",
            }
        )
        made = post(
            {"model": "gemini-2.5-flash", "systemInstruction": {"parts": [{"text": SYSTEM}]}, "ttl": "60s"}
        ).json()
        masked = httpx.patch(
            f"{url}/v1beta/{made['name']}?updateMask=displayName",
            json={"displayName": "x"},
            headers={"x-goog-api-key": "k"},
        )
        empty = httpx.patch(f"{url}/v1beta/{made['name']}", json={}, headers={"x-goog-api-key": "k"})
        unknown = httpx.delete(f"{url}/v1beta/cachedContents/nope", headers={"x-goog-api-key": "k"})
    assert small.status_code == 400 and "too small" in small.json()["error"]["message"]
    assert [r.status_code for r in (no_model, bad_ttl, masked, empty)] == [400] * 4
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == "NOT_FOUND"
