"""proxy.usage_tap: usage from plain and streamed responses of every provider."""

from __future__ import annotations

import gzip
import json

import httpx

from analyzer.usage import Usage
from proxy.accounting.records import RequestRecord
from proxy.endpoints import endpoint_for
from proxy.exchange import Exchange
from proxy.upstream_urls import Target
from proxy.usage_tap import JSONTap, SSETap, tap_for, usage_from_body


def sse(*objs, events=None) -> bytes:
    out = b""
    for i, obj in enumerate(objs):
        if events:
            out += f"event: {events[i]}\n".encode()
        out += (
            b"data: "
            + (obj if isinstance(obj, bytes) else json.dumps(obj, separators=(",", ":")).encode())
            + b"\n\n"
        )
    return out


def test_kinds():
    assert endpoint_for("anthropic", "/v1/messages").usage == "anthropic"
    assert endpoint_for("openai", "/v1/responses").usage == "responses"
    assert endpoint_for("openai", "/v1/chat/completions").usage == "chat"


def test_json_tap_gzip_and_chunks():
    body = json.dumps(
        {
            "usage": {
                "prompt_tokens": 2000,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 1536},
            }
        }
    ).encode()
    packed = gzip.compress(body)
    tap = JSONTap("chat", b"gzip")
    for i in range(0, len(packed), 7):
        tap.feed(packed[i : i + 7])
    assert tap.usage() == Usage(input_tokens=2000, cached_tokens=1536, output_tokens=5)


def test_json_tap_unreadable_bodies_give_none():
    for encoding, data in (
        (None, b"not json"),
        (b"br", b"\x00\x01"),
        (None, b'{"no":"usage"}'),
        (b"gzip", b"garbage"),
    ):
        tap = JSONTap("chat", encoding)
        tap.feed(data)
        assert tap.usage() is None


def test_anthropic_plain_sums_cache_tokens():
    tap = JSONTap("anthropic")
    tap.feed(
        json.dumps(
            {
                "usage": {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 200,
                    "output_tokens": 7,
                }
            }
        ).encode()
    )
    assert tap.usage() == Usage(
        input_tokens=1210, cached_tokens=1000, cache_write_tokens=200, output_tokens=7
    )


def test_openai_stream_usage_chunk_kept_or_stripped():
    chunks = [
        {"choices": [{"delta": {"content": "hi"}}], "usage": None},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 1100,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 1024},
            },
        },
    ]
    stream = sse(*chunks) + b"data: [DONE]\n\n"
    tee = SSETap("chat")
    for i in range(0, len(stream), 5):
        tee.feed(stream[i : i + 5])
    assert tee.usage() == Usage(input_tokens=1100, cached_tokens=1024, output_tokens=3)

    edit = SSETap("chat", strip_usage_chunk=True)
    kept = b"".join(e.raw for e in edit.events(stream) if edit.keep(e)) + edit.flush()
    assert kept == sse(chunks[0]) + b"data: [DONE]\n\n"
    assert edit.usage() == tee.usage()


def test_responses_stream_completed_event():
    stream = sse(
        {"type": "response.created", "response": {"usage": None}},
        {"type": "response.output_text.delta", "delta": "x"},
        {
            "type": "response.completed",
            "response": {
                "usage": {
                    "input_tokens": 3000,
                    "input_tokens_details": {"cached_tokens": 2048},
                    "output_tokens": 9,
                }
            },
        },
        events=["response.created", "response.output_text.delta", "response.completed"],
    )
    tap = SSETap("responses")
    tap.feed(stream)
    assert tap.usage() == Usage(input_tokens=3000, cached_tokens=2048, output_tokens=9)


def test_anthropic_stream_merges_start_and_delta():
    stream = sse(
        {
            "type": "message_start",
            "message": {
                "usage": {
                    "input_tokens": 5,
                    "cache_read_input_tokens": 2048,
                    "cache_creation_input_tokens": 100,
                    "output_tokens": 1,
                }
            },
        },
        {"type": "content_block_delta", "delta": {"text": "x"}},
        {"type": "message_delta", "usage": {"output_tokens": 42}},
        events=["message_start", "content_block_delta", "message_delta"],
    )
    tap = SSETap("anthropic")
    for i in range(0, len(stream), 11):
        tap.feed(stream[i : i + 11])
    assert tap.usage() == Usage(
        input_tokens=2153, cached_tokens=2048, cache_write_tokens=100, output_tokens=42
    )


def test_stream_without_usage_and_garbage_is_none():
    tap = SSETap("chat")
    tap.feed(b'data: {"usage": {broken\n\ndata: [DONE]\n\n')
    assert tap.usage() is None
    assert SSETap("anthropic").usage() is None


def test_disabled_json_tap_keeps_nothing():
    tap = JSONTap("chat", None, enabled=False)
    tap.feed(json.dumps({"usage": {"prompt_tokens": 1}}).encode())
    assert tap.usage() is None and tap._parts == []


def _exchange(method: str, route: str, ask_usage: bool = False) -> Exchange:
    provider = "anthropic" if route.startswith("/v1/messages") else "openai"
    target = Target(provider, route, httpx.URL("http://upstream.test" + route), endpoint_for(provider, route))
    return Exchange(
        RequestRecord("r", 0.0, "t", provider, route, method=method), target=target, ask_usage=ask_usage
    )


def _response(content_type: str, encoding: str | None = None) -> httpx.Response:
    headers = {"content-type": content_type, **({"content-encoding": encoding} if encoding else {})}
    return httpx.Response(200, headers=headers)


def test_tap_for_reads_the_exchange():
    tap, edit = tap_for(
        _exchange("POST", "/v1/chat/completions", ask_usage=True), _response("text/event-stream")
    )
    assert isinstance(tap, SSETap) and tap.kind == "chat" and tap.strip_usage_chunk and edit
    tap, edit = tap_for(
        _exchange("POST", "/v1/chat/completions", ask_usage=True), _response("text/event-stream", "gzip")
    )
    assert (
        isinstance(tap, SSETap) and not tap.strip_usage_chunk and not edit
    )  # a compressed stream is never edited
    tap, edit = tap_for(_exchange("POST", "/v1/messages"), _response("application/json"))
    assert isinstance(tap, JSONTap) and tap.kind == "anthropic" and tap._decoder.ok and not edit
    tap, edit = tap_for(_exchange("POST", "/v1/audio/speech"), _response("application/json"))
    assert isinstance(tap, JSONTap) and not tap._decoder.ok  # not billable: nothing kept
    tap, edit = tap_for(_exchange("GET", "/v1/responses"), _response("application/json"))
    assert (
        isinstance(tap, JSONTap) and tap.kind == "responses" and not tap._decoder.ok
    )  # a retrieval would count twice


# -- Gemini ------------------------------------------------------------------------------

GEMINI_USAGE = {
    "promptTokenCount": 3000,
    "cachedContentTokenCount": 2048,
    "candidatesTokenCount": 7,
    "thoughtsTokenCount": 3,
    "totalTokenCount": 3010,
}


def test_gemini_plain_and_the_json_array_stream():
    tap = JSONTap("gemini", None)
    tap.feed(json.dumps({"candidates": [], "usageMetadata": GEMINI_USAGE}).encode())
    assert tap.usage().to_dict() == {
        "input_tokens": 3000,
        "cached_tokens": 2048,
        "cache_write_tokens": 0,
        "cache_write_1h_tokens": 0,
        "output_tokens": 10,
        "cache_write_12h_tokens": 0,
    }
    array = JSONTap(
        "gemini", None
    )  # streamGenerateContent without alt=sse: one JSON array, the last chunk has the totals
    body = json.dumps(
        [
            {"usageMetadata": {"promptTokenCount": 3000}},
            {"candidates": []},
            {"usageMetadata": GEMINI_USAGE},
            {"candidates": []},
        ]
    ).encode()
    for i in range(0, len(body), 7):
        array.feed(body[i : i + 7])
    assert array.usage().cached_tokens == 2048 and array.usage().output_tokens == 10
    assert (
        usage_from_body("gemini", {"candidates": []}) is None and usage_from_body("gemini", [1, "x"]) is None
    )


def test_gemini_sse_last_usage_metadata_wins_with_crlf_frames():
    tap = SSETap("gemini")
    stream = b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"
        for chunk in (
            {
                "candidates": [{"content": {"parts": [{"text": "a"}]}}],
                "usageMetadata": {"promptTokenCount": 3000, "cachedContentTokenCount": 2048},
            },
            {"candidates": [{"content": {"parts": [{"text": "b"}]}}], "usageMetadata": GEMINI_USAGE},
        )
    )
    for i in range(0, len(stream), 5):
        tap.feed(stream[i : i + 5])
    assert tap.usage().to_dict()["output_tokens"] == 10 and tap.usage().cached_tokens == 2048
    assert SSETap("gemini").usage() is None


def test_tap_for_a_gemini_stream():
    route = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    target = Target(
        "gemini", route, httpx.URL("http://upstream.test" + route + "?alt=sse"), endpoint_for("gemini", route)
    )
    exchange = Exchange(RequestRecord("r", 0.0, "t", "gemini", route), target=target)
    tap, edit = tap_for(exchange, _response("text/event-stream"))
    assert isinstance(tap, SSETap) and tap.kind == "gemini" and not edit
    tap, edit = tap_for(exchange, _response("application/json"))
    assert isinstance(tap, JSONTap) and tap.kind == "gemini"
