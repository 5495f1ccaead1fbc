"""proxy.h1_wire: response heads and body framing (RFC 9112 §6.3)."""

from __future__ import annotations

import httpx
import pytest

from proxy.h1_wire import framing_of, parse_head


def test_parse_head():
    version, status, headers = parse_head(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nX-Empty:\r\n\r\n")
    assert (version, status, headers) == (b"HTTP/1.1", 429, [(b"Retry-After", b"7"), (b"X-Empty", b"")])


@pytest.mark.parametrize("head", [b"HTTP/2 200 OK\r\n\r\n", b"HTTP/1.1 2x0 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", b"HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n"])
def test_parse_head_rejects(head):
    with pytest.raises(httpx.RemoteProtocolError):
        parse_head(head)


@pytest.mark.parametrize(
    "method, version, status, headers, expected",
    [
        ("POST", b"HTTP/1.1", 200, [(b"Content-Length", b"12")], ("length", 12, True)),
        ("POST", b"HTTP/1.1", 200, [(b"Transfer-Encoding", b"chunked"), (b"Content-Length", b"3")], ("chunked", 0, True)),
        ("POST", b"HTTP/1.1", 200, [], ("close", 0, False)),
        ("POST", b"HTTP/1.1", 200, [(b"Content-Length", b"1"), (b"Connection", b"close")], ("length", 1, False)),
        ("POST", b"HTTP/1.0", 200, [(b"Content-Length", b"1")], ("length", 1, False)),
        ("POST", b"HTTP/1.0", 200, [(b"Content-Length", b"1"), (b"Connection", b"keep-alive")], ("length", 1, True)),
        ("HEAD", b"HTTP/1.1", 200, [(b"Content-Length", b"99")], ("none", 0, True)),
        ("POST", b"HTTP/1.1", 204, [], ("none", 0, True)),
        ("GET", b"HTTP/1.1", 304, [(b"Content-Length", b"5")], ("none", 0, True)),
    ],
)
def test_framing(method, version, status, headers, expected):
    assert framing_of(method, version, status, headers) == expected


@pytest.mark.parametrize("headers", [[(b"Content-Length", b"-1")], [(b"Content-Length", b"1"), (b"Content-Length", b"2")], [(b"Content-Length", b"1e3")]])
def test_bad_content_length(headers):
    with pytest.raises(httpx.RemoteProtocolError):
        framing_of("GET", b"HTTP/1.1", 200, headers)
