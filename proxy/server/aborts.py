"""How a response that cannot finish ends: one log line from the proxy, no traceback.

Once the status line has gone out, the only way to tell a client that a body is
incomplete is to abort the connection, and an ASGI app does that by raising: uvicorn then
closes the socket, so the client sees a truncated response, never a complete-looking
one. uvicorn also logs ``Exception in ASGI application`` with a full traceback, which
for an expected event (an upstream dying mid-stream, a shutdown cutting a stream) is
noise. So the relay logs its own one line (with the request id), then raises one of::

    Aborted                       (marker mixin: "already logged")
      ├─ UpstreamFailed (RuntimeError)       the upstream broke off mid-response
      └─ ShutdownCut (asyncio.CancelledError) the server's shutdown timeout cut it; still a
                                              cancellation, so the task ends cancelled

and :class:`DropLogged`, installed on the ``uvicorn.error`` logger by
:func:`install_log_filter`, drops uvicorn's record for them (and only for them).

This module does not decide when a response is aborted (see :mod:`proxy.relay`).
"""

from __future__ import annotations

import asyncio
import logging


class Aborted:
    """Marker mixin (not an exception itself, so ``except Exception`` never catches a
    cancellation through it): raised after the proxy logged its own line."""


class UpstreamFailed(Aborted, RuntimeError):
    pass


class ShutdownCut(Aborted, asyncio.CancelledError):  # type: ignore[misc]
    pass


class DropLogged(logging.Filter):
    """Drops log records whose exception is an :class:`Aborted` (already logged)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, Aborted)


_FILTER = DropLogged()


def install_log_filter(logger_name: str = "uvicorn.error") -> None:
    """Adds the filter to ``logger_name`` (idempotent)."""
    logger = logging.getLogger(logger_name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
