"""How a response that cannot finish ends: one log line from the proxy, no traceback.

The relay logs one line (with the request id), then raises; uvicorn aborts the connection::

    Aborted                       (marker mixin: "already logged")
      ├─ UpstreamFailed (RuntimeError)        the upstream broke off mid-response
      └─ ShutdownCut (asyncio.CancelledError) the shutdown timeout cut it (still cancelled)

:class:`DropLogged` (:func:`install_log_filter`) drops uvicorn's record for them only. It
does not decide when a response is aborted (:mod:`proxy.relay`). See docs/shutdown.md.
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
