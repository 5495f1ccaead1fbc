from __future__ import annotations

import httpx
import pytest

from proxy.transport.upstream import wire_headers

HEADERS = [(b"authorization", b"Bearer sk-x"), (b"content-type", b"application/json"), (b"X-Trace", b"a")]


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("POST", "http://127.0.0.1:8081/v1/chat/completions", b'{"model":"m"}'),
        ("POST", "https://api.openai.com/v1/responses", b""),
        ("PUT", "http://example.test/v1/x", b""),
        ("GET", "http://127.0.0.1:9/v1/models?limit=2", b""),
        ("DELETE", "https://api.anthropic.com:8443/v1/files/f", b"x"),
    ],
)
def test_wire_headers_match_what_httpx_would_send(method, url, body):
    u = httpx.URL(url)
    expected = httpx.Request(method, u, headers=HEADERS, content=body).headers.raw
    assert wire_headers(method, u, HEADERS, body) == expected
