"""analyzer.wire: the error bodies and SSE frames that the proxy, the emulator and the engine write."""

from __future__ import annotations

import orjson

from analyzer import wire


def test_openai_error_has_every_field_in_openai_order():
    body = orjson.dumps(wire.openai_error("bad", "invalid_request_error", param="model"))
    assert body == b'{"error":{"message":"bad","type":"invalid_request_error","param":"model","code":null}}'


def test_the_proxy_order_puts_code_before_param():
    body = orjson.dumps(wire.openai_error("m", "timeout", code="upstream_timeout", code_before_param=True))
    assert body == b'{"error":{"message":"m","type":"timeout","code":"upstream_timeout","param":null}}'


def test_openai_error_type_by_status():
    assert [wire.openai_error_type(s) for s in (400, 404, 499, 500, 503)] == [
        "invalid_request_error",
        "invalid_request_error",
        "invalid_request_error",
        "server_error",
        "server_error",
    ]


def test_anthropic_error_carries_a_request_id_only_when_given():
    assert wire.anthropic_error("api_error", "m") == {
        "type": "error",
        "error": {"type": "api_error", "message": "m"},
    }
    assert wire.anthropic_error("api_error", "m", request_id="req_1")["request_id"] == "req_1"


def test_sse_frames():
    assert wire.sse_data({"a": "é"}) == 'data: {"a":"é"}\n\n'.encode()
    assert wire.sse_event("ping", {"type": "ping"}) == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert wire.SSE_DONE == b"data: [DONE]\n\n"
