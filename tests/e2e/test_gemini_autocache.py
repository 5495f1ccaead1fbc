"""End to end: google-genai SDK → prefixgate ``--gemini-auto-cache`` → emulator.

A tenant repeats a long prefix (a system instruction and a document): after N sightings the
proxy creates a ``cachedContents`` entry on the emulator in the background with the
client's key, later requests go out referencing it (the emulator reads the cache: no
systemInstruction in their bodies, else it would answer 400), answers are the same as the
un-rewritten request's, usage shows ``cachedContentTokenCount`` = the cache's tokens, and the
ledger has the rewrite. Another tenant never gets the cache. A cache deleted upstream behind
the proxy's back: the next request is refused for it, resent as sent by the proxy, and the
client gets a 200 with the same answer (one ledger row, marked resent); the one after goes as
sent and makes the cache again. Every create is its own ledger row with the storage it bought,
the last one with no request after it; stats and ledger add up (net saved = saved - storage).
"""

from __future__ import annotations

import json
import sqlite3
import time

import httpx
import pytest
from google import genai
from google.genai import types

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from proxy.reporting.summary import summarize
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

SYSTEM = "You are the contracts assistant of the prefixgate auto-cache tests. " * 150  # ≈ 2550 tokens
DOC = "Clause: the supplier delivers within ten days; late deliveries cost one percent a day. " * 20
KEY, OTHER_KEY = "AIza-autocache-owner", "AIza-autocache-other"


def contents(question: str) -> list[types.Content]:
    return [
        types.Content(role="user", parts=[types.Part(text=DOC)]),
        types.Content(role="model", parts=[types.Part(text="Read it.")]),
        types.Content(role="user", parts=[types.Part(text=question)]),
    ]


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + 10  # a bound on a background call, not a speed check
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def emulator_counts(upstream: str) -> dict:
    return httpx.get(f"{upstream}/_emulator/requests").json()["cached_contents"]


def test_repeated_prefix_becomes_an_explicit_cache(state_dir):
    config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=8)
    ledger = state_dir / "ledger.sqlite"
    with serve(create_emulator()) as upstream:
        direct = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=upstream))
        cfg = ProxyConfig(
            gemini_base=upstream,
            state_dir=state_dir,
            ledger=str(ledger),
            gemini_auto_cache=True,
            gemini_auto_cache_after=3,
        )
        with serve(create_app(cfg)) as proxy:
            sdk = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=proxy))
            other = genai.Client(api_key=OTHER_KEY, http_options=types.HttpOptions(base_url=proxy))
            ask = lambda client, q: client.models.generate_content(
                model="gemini-2.5-flash", contents=contents(q), config=config
            )
            warm = [ask(sdk, f"question {i}: when is delivery due") for i in range(3)]
            wait_for(lambda: emulator_counts(upstream)["created"] == 1, "the cache's create")
            hit = ask(sdk, "question 9: what does a late day cost")
            hit_stream = list(
                sdk.models.generate_content_stream(
                    model="gemini-2.5-flash", contents=contents("question 10: and two days"), config=config
                )
            )
            stranger = ask(
                other, "question 9: what does a late day cost"
            )  # same prefix, another tenant: never the owner's cache
            reads = emulator_counts(upstream)["reads"]
            # the cache vanishes upstream behind the proxy's back: the next rewritten request is refused
            # for it and resent as sent (the client never sees the 404); the one after goes as sent
            (cache,) = list(direct.caches.list())
            direct.caches.delete(name=cache.name)
            resent = ask(sdk, "question 11: when is delivery due")
            after = ask(
                sdk, "question 12"
            )  # its prefix was seen N times: it makes the cache again, and no request follows
            wait_for(lambda: emulator_counts(upstream)["created"] == 2, "the second create")
            wait_for(
                lambda: httpx.get(f"{proxy}/prefixgate/stats").json()["requests"] == 10,
                "the second create's record",
            )
            stats = httpx.get(f"{proxy}/prefixgate/stats").json()
        unrewritten = direct.models.generate_content(
            model="gemini-2.5-flash",
            contents=contents("question 9: what does a late day cost"),
            config=config,
        )
        resent_direct = direct.models.generate_content(
            model="gemini-2.5-flash", contents=contents("question 11: when is delivery due"), config=config
        )

    headers = [r.sdk_http_response.headers["x-prefixgate-gemini-cache"] for r in warm]
    assert headers == ["none", "none", "creating"]
    assert hit.sdk_http_response.headers["x-prefixgate-gemini-cache"] == "hit"
    assert "gemini-cached-content" in hit.sdk_http_response.headers["x-prefixgate-rewrites"]
    assert hit.text == unrewritten.text  # the same model input, so the same answer
    meta = hit.usage_metadata
    tokens = cache.usage_metadata.total_token_count
    assert meta.cached_content_token_count == tokens >= 2048
    assert meta.prompt_token_count == unrewritten.usage_metadata.prompt_token_count
    assert hit_stream[-1].usage_metadata.cached_content_token_count == meta.cached_content_token_count
    assert reads == 2  # the plain and the streamed request read the cache; the stranger did not
    assert stranger.sdk_http_response.headers["x-prefixgate-gemini-cache"] == "none"
    assert (
        resent.sdk_http_response.headers["x-prefixgate-gemini-cache"] == "resent"
        and resent.text == resent_direct.text
    )
    assert after.sdk_http_response.headers["x-prefixgate-gemini-cache"] == "creating" and after.text

    conn = sqlite3.connect(ledger)
    rows = conn.execute(
        "SELECT request_id, route, method, rewrites, cache_storage_usd, cached_tokens, saved_usd, status, input_tokens "
        "FROM requests ORDER BY ts, id"
    ).fetchall()
    summary = summarize(conn)
    conn.close()
    creates = [r for r in rows if r[0].endswith("-create")]
    clients = [r for r in rows if not r[0].endswith("-create")]
    assert len(clients) == 8 and len(creates) == 2 and len(rows) == 10 == stats["requests"]
    assert all(r[7] == 200 for r in rows)  # the client never saw the vanished cache's 404
    assert [json.loads(r[3]) for r in clients if "gemini-cached-content-resent" in json.loads(r[3])] == [
        ["gemini-cached-content", "gemini-cached-content-resent"]
    ]
    assert [r[0] for r in creates] == [
        clients[2][0] + "-create",
        clients[7][0] + "-create",
    ]  # the third and the last request's
    assert json.loads(clients[7][3]) == []  # the request after the resend went as sent
    for create in creates:  # its own row: the cachedContents call, no tokens, the storage it bought
        assert (create[1], create[2], json.loads(create[3]), create[5], create[8]) == (
            "/v1/cachedContents",
            "POST",
            [],
            None,
            None,
        )  # the version the SDK used
    # 2.5 Flash storage: $1.00 per 1M tokens per hour, for the cache's tokens over its ttl (the 5-minute floor here)
    storage = [r[4] for r in rows if r[4] is not None]
    assert (
        storage == [pytest.approx(tokens * 1.0 / 1e6 * 300 / 3600)] * 2 and [r[4] for r in creates] == storage
    )
    assert (
        summary["cache_storage_usd"]
        == pytest.approx(2 * tokens * 1.0 / 1e6 * 300 / 3600, abs=1e-9)
        == stats["cache_storage_usd"]
    )
    assert summary["saved_usd"] > 0 and summary["saved_usd"] == pytest.approx(
        sum(r[6] or 0 for r in rows), abs=1e-9
    )
    assert summary["net_saved_usd"] == pytest.approx(
        summary["saved_usd"] - summary["cache_storage_usd"], abs=1e-9
    )
    assert stats["net_saved_usd"] == pytest.approx(summary["net_saved_usd"], abs=1e-9)
    assert not any(KEY.encode() in p.read_bytes() for p in state_dir.rglob("*") if p.is_file())
