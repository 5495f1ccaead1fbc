"""The pool's security boundary: when an upstream connection may carry another request.

HTTP/1.1 has no request ids: a response belongs to a request only by its place on the
connection. One stray byte (a body running past its ``Content-Length``, a ``408`` sent to
an idle connection, a protocol switch) shifts every later response onto the wrong
request, across tenants. So a connection goes back to the pool, and comes out of it, only
when its last exchange ended *exactly*; every other case closes it. Both rules live here
and nowhere else:

- :func:`may_release` (after a response): the response was read to its end as framed
  (Content-Length, chunked, or a body-less status); no byte arrived after that end; both
  sides allowed keep-alive (HTTP/1.1 without ``Connection: close``, or HTTP/1.0 with
  ``keep-alive``); no upgrade; the parser saw no error, and its framing was strict RFC 9112
  (nothing llhttp merely tolerated: a bare LF, an empty line before the status line, …,
  :mod:`proxy.transport.strict`); reading is not paused (a body
  left unread above the high-water mark: the next response would never be read); the
  request went out whole; the socket is still open.
- :func:`may_checkout` (before the next request): still open, nothing arrived while it
  was idle (seen by the protocol, or waiting unread in the socket: a poll with no wait),
  and idle for less than ``keepalive_expiry``.

This module decides; it does not read, write or close sockets.
"""

from __future__ import annotations

import select

_POLL_BAD = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP | getattr(select, "POLLRDHUP", 0)


def may_release(conn, parser) -> bool:
    """``conn`` (a :class:`proxy.transport.connection.Connection`) may go back to the pool
    after the response ``parser`` read (its :class:`proxy.transport.response_parser.ResponseParser`)."""
    return (
        parser.complete
        and not parser.leftover
        and parser.keep_alive
        and not parser.failed
        and parser.tolerated is None
        and not parser.paused
        and not conn.dead
        and conn.transport is not None
        and not conn.transport.is_closing()
    )


def may_checkout(conn, now: float, keepalive_expiry: float) -> bool:
    """An idle ``conn`` may carry a new request now."""
    if conn.dead or conn.transport is None or conn.transport.is_closing():
        return False
    if now - conn.idle_since >= keepalive_expiry:
        return False
    return not socket_has_news(conn.transport)


def socket_has_news(transport) -> bool:
    """True when the socket under ``transport`` is readable or hung up: unsolicited bytes
    (or an EOF) that the event loop has not delivered yet. Unknown sockets count as news."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return True
    try:
        poller = select.poll()
        poller.register(sock.fileno(), _POLL_BAD)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True
