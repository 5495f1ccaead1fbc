"""proxy.transport.reuse: the one rule for putting a connection back and taking it out."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from proxy.transport.reuse import may_checkout, may_release, socket_has_news


class FakeTransport:
    def __init__(self, sock=None, closing=False):
        self.sock, self.closing = sock, closing

    def is_closing(self):
        return self.closing

    def get_extra_info(self, name):
        return self.sock if name == "socket" else None


def _exchange(**over):
    base = dict(complete=True, leftover=False, keep_alive=True, failed=None, tolerated=None, paused=False)
    return SimpleNamespace(**{**base, **over})


def _conn(transport, **over):
    base = dict(dead=False, transport=transport, idle_since=100.0)
    return SimpleNamespace(**{**base, **over})


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_release_only_after_an_exact_end(pair):
    conn = _conn(FakeTransport(pair[0]))
    assert may_release(conn, _exchange())
    assert not may_release(conn, _exchange(complete=False))  # body not read to its end
    assert not may_release(conn, _exchange(leftover=True))  # bytes after the end
    assert not may_release(conn, _exchange(keep_alive=False))  # Connection: close, HTTP/1.0, close-delimited
    assert not may_release(conn, _exchange(failed=ValueError("x")))
    assert not may_release(conn, _exchange(paused=True))  # a body left unread: reading is off
    assert not may_release(
        conn, _exchange(tolerated="a bare LF ends a line of the head")
    )  # framing llhttp only tolerated
    assert not may_release(_conn(FakeTransport(pair[0]), dead=True), _exchange())  # unsolicited bytes seen
    assert not may_release(_conn(FakeTransport(pair[0], closing=True)), _exchange())
    assert not may_release(_conn(None), _exchange())


def test_checkout_refuses_expired_dead_or_readable(pair):
    a, b = pair
    conn = _conn(FakeTransport(a))
    assert may_checkout(conn, now=110.0, keepalive_expiry=60.0)
    assert not may_checkout(conn, now=161.0, keepalive_expiry=60.0)
    assert not may_checkout(_conn(FakeTransport(a), dead=True), now=110.0, keepalive_expiry=60.0)
    b.sendall(b"HTTP/1.1 408 Request Timeout\r\n\r\n")  # waiting unread in the socket
    assert not may_checkout(conn, now=110.0, keepalive_expiry=60.0)


def test_socket_news_sees_data_and_hang_ups(pair):
    a, b = pair
    assert not socket_has_news(FakeTransport(a))
    b.sendall(b"x")
    assert socket_has_news(FakeTransport(a))
    a.recv(1)
    assert not socket_has_news(FakeTransport(a))
    b.shutdown(socket.SHUT_WR)
    assert socket_has_news(FakeTransport(a))  # EOF: the peer closed
    assert socket_has_news(FakeTransport(None))  # unknown: never reused
