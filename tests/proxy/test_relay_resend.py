"""proxy.relay: a request the Gemini auto-cache rewrote, refused by the upstream for its
cachedContent, is resent once as the client sent it (streaming too); every other error is
relayed byte for byte. Against a mocked Gemini upstream (httpx.MockTransport)."""

from __future__ import annotations

import gzip

import httpx
import orjson
import pytest

from tests.support.gemini_auto_cache import ANSWER, GEN, KEY, REFUSED, STREAM, auto_cached_proxy, body


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


@pytest.fixture
def proxy(state_dir):
    with auto_cached_proxy(state_dir) as proxy:
        yield proxy


def test_a_compressed_refusal_is_resent_and_the_client_gets_the_answer(proxy):
    client, gemini, keep = proxy
    gemini.refusal = httpx.Response(
        403,
        headers={"content-encoding": "gzip", "content-type": "application/json"},
        content=gzip.compress(REFUSED),
    )
    answer = client.post(GEN, json=body("q"), headers=KEY)
    assert (
        answer.status_code == 200
        and answer.json() == ANSWER
        and answer.headers["x-prefixgate-gemini-cache"] == "resent"
    )
    rewritten, resent = gemini.generate[-2:]
    assert (
        rewritten.headers["accept-encoding"] == "identity"
    )  # a rewritten request asks for an error it can read
    assert b"cachedContent" in rewritten.content and orjson.loads(resent.content) == body("q")
    record = keep.records[-1]
    assert (record.status, record.rewrites, len(keep.records)) == (
        200,
        ["gemini-cached-content", "gemini-cached-content-resent"],
        3,
    )
    assert record.usage is not None and record.usage.input_tokens == 2610
    assert (
        client.post(GEN, json=body("next"), headers=KEY).headers["x-prefixgate-gemini-cache"] != "hit"
    )  # the entry is gone


def test_a_refused_stream_is_resent_before_any_byte_went_out(proxy):
    client, gemini, keep = proxy
    gemini.refusal = httpx.Response(
        404,
        json={
            "error": {
                "code": 404,
                "message": "CachedContent not found: cachedContents/c1",
                "status": "NOT_FOUND",
            }
        },
    )
    answer = client.post(STREAM, json=body("q"), headers=KEY)
    assert answer.status_code == 200 and answer.headers["x-prefixgate-gemini-cache"] == "resent"
    assert answer.content == b"data: " + orjson.dumps(ANSWER) + b"\r\n\r\n"
    assert keep.records[-1].stream and keep.records[-1].usage.input_tokens == 2610 and len(keep.records) == 3


def test_other_errors_pass_byte_for_byte_and_keep_the_cache(proxy):
    client, gemini, keep = proxy
    message = orjson.dumps(
        {"error": {"code": 400, "message": "contents: " + "x" * 100_000, "status": "INVALID_ARGUMENT"}}
    )
    gemini.refusal = httpx.Response(
        400,
        headers={"content-type": "application/json"},
        stream=Chunks([message[i : i + 7000] for i in range(0, len(message), 7000)]),
    )
    answer = client.post(GEN, json=body("q"), headers=KEY)
    assert (
        answer.status_code == 400
        and answer.content == message
        and answer.headers["x-prefixgate-gemini-cache"] == "hit"
    )
    assert keep.records[-1].rewrites == ["gemini-cached-content"] and len(gemini.generate) == 3  # not resent
    gemini.refusal = None
    assert client.post(GEN, json=body("next"), headers=KEY).headers["x-prefixgate-gemini-cache"] == "hit"


def test_a_clients_own_cached_content_is_never_resent(proxy):
    client, gemini, keep = proxy
    gemini.refusal = httpx.Response(403, content=REFUSED)
    own = {"cachedContent": "cachedContents/theirs", "contents": [{"role": "user", "parts": [{"text": "q"}]}]}
    answer = client.post(GEN, json=own, headers=KEY)
    assert answer.status_code == 403 and answer.content == REFUSED and keep.records[-1].rewrites == []


def test_a_resend_that_cannot_reach_the_upstream_is_one_record(proxy):
    client, gemini, keep = proxy
    gemini.refusal = httpx.Response(403, content=REFUSED)
    gemini.unreachable_after_refusal = True
    answer = client.post(GEN, json=body("q"), headers=KEY)
    assert answer.status_code == 502 and answer.json()["error"]["status"]  # Google's error shape
    record = keep.records[-1]
    assert (record.status, record.error, record.rewrites[-1], len(keep.records)) == (
        502,
        "upstream_unreachable",
        "gemini-cached-content-resent",
        3,
    )


class Breaks(httpx.AsyncByteStream):
    async def __aiter__(self):
        yield b'{"error": {"code": 403, '
        raise httpx.ReadError("connection reset")


def test_an_error_body_that_breaks_while_read_is_a_clear_502_and_one_record(proxy):
    client, gemini, keep = proxy
    gemini.refusal = httpx.Response(403, stream=Breaks())
    answer = client.post(GEN, json=body("q"), headers=KEY)
    assert (
        answer.status_code == 502 and answer.json()["error"]["status"]
    )  # Google's error shape, before any byte went out
    record = keep.records[-1]
    assert (record.status, record.error, len(keep.records)) == (502, "upstream_read_error", 3)
