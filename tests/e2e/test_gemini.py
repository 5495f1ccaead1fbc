"""End to end: the official google-genai SDK → prefixgate (uvicorn) → emulator (uvicorn).

The SDK is pointed at the proxy through its ``http_options`` base URL, as a user would:
plain and streamed calls (``/v1/models/...:generateContent``, the SDK's default version,
and ``/v1beta`` with ``api_version="v1beta"``), through the default ``gemini`` upstream
at the root and a named one under its prefix. Bodies come back byte for byte (SSE, the
JSON-array stream and plain), usage lands in the record with the cached tokens, and a
body that is not JSON is forwarded untouched and counted unanalysed.
"""

from __future__ import annotations

import httpx
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from proxy.app import create_app
from proxy.config import ProxyConfig, UpstreamSpec
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve
from tests.support.sinks import Keep

pytestmark = pytest.mark.e2e

SYSTEM = (
    "You are a careful assistant for the prefixgate Gemini tests. " * 160
)  # ~9.8 KB ≈ 2450 tokens, over 2.5 Flash's 2,048
KEY = "AIza-e2e-gemini"


def proxy_in_front(state_dir, upstream: str):
    cfg = ProxyConfig(
        openai_base=f"{upstream}/v1",
        anthropic_base=upstream,
        gemini_base=upstream,
        state_dir=state_dir,
        upstreams=(UpstreamSpec("vertex", "gemini", upstream),),
    )
    app = create_app(cfg)
    keep = Keep()
    app.state.gate.recorder.add_sink(keep)
    return app, keep


def client(base_url: str, **options) -> genai.Client:
    return genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=base_url, **options))


def test_google_genai_sdk_through_the_proxy(state_dir):
    config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=8)
    with serve(create_emulator()) as upstream:
        app, keep = proxy_in_front(state_dir, upstream)
        with serve(app) as proxy:
            sdk = client(proxy)
            first = sdk.models.generate_content(
                model="gemini-2.5-flash", contents="name three colours", config=config
            )
            second = sdk.models.generate_content(
                model="gemini-2.5-flash", contents="name three colours", config=config
            )
            chunks = list(
                sdk.models.generate_content_stream(
                    model="gemini-2.5-flash", contents="name three colours", config=config
                )
            )
            beta_sdk, named_sdk = (
                client(proxy, api_version="v1beta"),
                client(f"{proxy}/vertex"),
            )  # kept: a Client closes its connections when collected
            beta = beta_sdk.models.generate_content(
                model="gemini-2.5-flash", contents="and four", config=config
            )
            named = named_sdk.models.generate_content(
                model="gemini-2.5-flash", contents="name three colours", config=config
            )
            tokens = sdk.models.count_tokens(model="gemini-2.5-flash", contents="hi")
            with pytest.raises(genai_errors.ClientError) as missing:
                sdk.models.generate_content(
                    model="gemini-2.5-flash",
                    contents="x",
                    config=types.GenerateContentConfig(cached_content="cachedContents/none"),
                )
            seen = httpx.get(f"{upstream}/_emulator/requests").json()["by_route"]

    assert first.text and first.usage_metadata.cached_content_token_count is None
    assert second.text == first.text and second.usage_metadata.cached_content_token_count >= 2048
    assert (
        second.sdk_http_response.headers["x-prefixgate-prefix-segments"] == "2"
    )  # systemInstruction + the user part
    assert (
        chunks[-1].usage_metadata.cached_content_token_count >= 2048
        and "".join(c.text for c in chunks) == first.text
    )
    assert beta.usage_metadata.cached_content_token_count >= 2048  # v1beta and v1 share the upstream's cache
    # another upstream name: the proxy's store keeps its prefixes apart (here both names reach one emulator, which hits)
    assert (
        named.sdk_http_response.headers["x-prefixgate-prefix-segments"] == "0"
        and named.usage_metadata.cached_content_token_count >= 2048
    )
    assert tokens.total_tokens > 0 and missing.value.code == 404
    assert seen == {
        "/v1/models/gemini-2.5-flash:generateContent": 4,
        "/v1/models/gemini-2.5-flash:streamGenerateContent": 1,
        "/v1beta/models/gemini-2.5-flash:generateContent": 1,
        "/v1/models/gemini-2.5-flash:countTokens": 1,
    }
    rows = [
        (
            r.upstream,
            r.provider,
            r.route,
            r.model,
            r.stream,
            r.status,
            r.analysed,
            r.usage.cached_tokens if r.usage else None,
        )
        for r in keep.records
    ]
    assert rows[:5] == [
        (
            "gemini",
            "gemini",
            "/v1/models/gemini-2.5-flash:generateContent",
            "gemini-2.5-flash",
            False,
            200,
            True,
            0,
        ),
        (
            "gemini",
            "gemini",
            "/v1/models/gemini-2.5-flash:generateContent",
            "gemini-2.5-flash",
            False,
            200,
            True,
            second.usage_metadata.cached_content_token_count,
        ),
        (
            "gemini",
            "gemini",
            "/v1/models/gemini-2.5-flash:streamGenerateContent",
            "gemini-2.5-flash",
            True,
            200,
            True,
            chunks[-1].usage_metadata.cached_content_token_count,
        ),
        (
            "gemini",
            "gemini",
            "/v1beta/models/gemini-2.5-flash:generateContent",
            "gemini-2.5-flash",
            False,
            200,
            True,
            beta.usage_metadata.cached_content_token_count,
        ),
        (
            "vertex",
            "gemini",
            "/vertex/v1/models/gemini-2.5-flash:generateContent",
            "gemini-2.5-flash",
            False,
            200,
            True,
            named.usage_metadata.cached_content_token_count,
        ),
    ]
    assert rows[5][2].endswith(":countTokens") and rows[5][7] is None  # not billed: no usage read
    assert (
        rows[6][5] == 404 and keep.records[6].total_segments == 2
    )  # cachedContent → the user part; the upstream's 404 relayed
    assert keep.records[1].usage.input_tokens == second.usage_metadata.prompt_token_count
    assert keep.records[2].usage.output_tokens == chunks[-1].usage_metadata.candidates_token_count


@pytest.mark.parametrize(
    "path",
    [
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    ],
)
def test_bodies_come_back_byte_for_byte(state_dir, path):
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hello there"}]}],
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
    }
    with serve(create_emulator()) as direct, serve(create_emulator()) as upstream:
        app, keep = proxy_in_front(state_dir, upstream)
        with serve(app) as proxy:
            answers = []
            for base in (direct, proxy):
                with httpx.Client() as c:
                    r = c.post(base + path, json=body, headers={"x-goog-api-key": KEY})
                    answers.append((r.status_code, r.headers["content-type"], r.content))
    assert answers[0] == answers[1]
    assert keep.records[0].usage is not None and keep.records[0].usage.input_tokens > 2048


def test_the_key_in_the_query_and_a_body_that_is_not_json(state_dir):
    with serve(create_emulator()) as upstream:
        app, keep = proxy_in_front(state_dir, upstream)
        with serve(app) as proxy:
            ok = httpx.post(
                f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?key={KEY}",
                json={"contents": [{"parts": [{"text": "hi"}]}]},
            )
            bad = httpx.post(
                f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?key={KEY}",
                content=b"{not json",
                headers={"content-type": "application/json"},
            )
            header = httpx.post(
                f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent",
                json={"contents": [{"parts": [{"text": "hi"}]}]},
                headers={"x-goog-api-key": KEY},
            )
            lost = httpx.post(f"{proxy}/v1beta", json={})
    assert ok.status_code == 200 and header.status_code == 200
    assert (
        bad.status_code == 400 and bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    )  # the emulator's answer, relayed
    assert "x-prefixgate-error" not in bad.headers
    assert (
        lost.status_code == 404 and lost.json()["error"]["status"] == "NOT_FOUND"
    )  # the proxy's own, in Gemini's shape
    tenants = {r.tenant for r in keep.records[:3]}
    assert len(tenants) == 1 and "anonymous" not in tenants  # one key, whether in the query or the header
    assert [r.analysed for r in keep.records[:3]] == [True, False, True]
