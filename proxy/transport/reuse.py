"""The pool's security boundary: when an upstream connection may carry another request.

A connection goes back to the pool, and comes out of it, only when its last exchange ended
exactly; one stray byte would shift later responses onto other requests, across tenants.
:func:`may_release` decides after a response, :func:`may_checkout` before the next request.

It decides; it does not read, write or close sockets. See docs/request-path.md.
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
