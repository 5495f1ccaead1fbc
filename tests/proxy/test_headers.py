"""proxy.headers: hop-by-hop headers dropped, auth kept, identity on demand."""

from __future__ import annotations

from proxy.headers import has_no_body, request_headers, response_headers

CLIENT = [
    (b"host", b"127.0.0.1:8080"),
    (b"authorization", b"Bearer sk-test"),
    (b"x-api-key", b"ant-key"),
    (b"connection", b"keep-alive, x-drop-me"),
    (b"x-drop-me", b"1"),
    (b"keep-alive", b"timeout=5"),
    (b"transfer-encoding", b"chunked"),
    (b"content-length", b"10"),
    (b"accept-encoding", b"gzip"),
    (b"content-type", b"application/json"),
    (b"proxy-authorization", b"Basic abc"),
]


def test_request_headers_keep_auth_and_drop_hop_by_hop():
    out = dict(request_headers(CLIENT))
    assert out == {
        b"authorization": b"Bearer sk-test",
        b"x-api-key": b"ant-key",
        b"accept-encoding": b"gzip",
        b"content-type": b"application/json",
    }


def test_force_identity_replaces_accept_encoding():
    out = request_headers(CLIENT, force_identity=True)
    assert [v for k, v in out if k == b"accept-encoding"] == [b"identity"]


def test_response_headers_keep_encoding_and_length_unless_edited():
    upstream = [
        (b"Content-Type", b"text/event-stream"),
        (b"Content-Length", b"99"),
        (b"Content-Encoding", b"gzip"),
        (b"Transfer-Encoding", b"chunked"),
        (b"Connection", b"close"),
    ]
    assert response_headers(upstream) == [
        (b"content-type", b"text/event-stream"),
        (b"content-length", b"99"),
        (b"content-encoding", b"gzip"),
    ]
    assert response_headers(upstream, keep_length=False) == [
        (b"content-type", b"text/event-stream"),
        (b"content-encoding", b"gzip"),
    ]


def test_own_headers_never_cross_either_way():
    sent = request_headers([(b"x-prefixgate-admin-token", b"adm"), (b"authorization", b"Bearer k")])
    assert sent == [(b"authorization", b"Bearer k")]
    back = response_headers(
        [(b"X-Prefixgate-Prefix-Segments", b"99"), (b"content-type", b"application/json")]
    )
    assert back == [(b"content-type", b"application/json")]


def test_statuses_without_a_body_lose_content_length():
    upstream = [(b"content-length", b"5"), (b"etag", b'"v1"')]
    assert [has_no_body(s) for s in (100, 103, 200, 204, 206, 304, 404)] == [
        True,
        True,
        False,
        True,
        False,
        True,
        False,
    ]
    for status in (103, 204, 304):
        assert response_headers(upstream, status=status) == [(b"etag", b'"v1"')]
    assert (
        response_headers(upstream, status=200) == upstream
    )  # HEAD answers keep it too: the relay sends no body
