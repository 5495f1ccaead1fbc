"""proxy.server.aborts: the exceptions the relay raises after logging its own line, and the
uvicorn.error filter that drops uvicorn's traceback for them (and nothing else)."""

from __future__ import annotations

import asyncio
import logging

from proxy.server.aborts import Aborted, DropLogged, ShutdownCut, UpstreamFailed, install_log_filter


def record_for(exc: BaseException | None) -> logging.LogRecord:
    exc_info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(
        "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application\n", None, exc_info
    )


def test_the_filter_drops_only_already_logged_aborts():
    keep = DropLogged().filter
    assert not keep(record_for(UpstreamFailed("upstream failed mid-response on request x: ReadError")))
    assert not keep(record_for(ShutdownCut("request x cut by shutdown")))
    assert keep(record_for(RuntimeError("a real bug")))
    assert keep(record_for(asyncio.CancelledError()))
    assert keep(record_for(None))


def test_a_shutdown_cut_is_still_a_cancellation_and_never_an_exception():
    cut = ShutdownCut("x")
    assert isinstance(cut, asyncio.CancelledError) and isinstance(cut, Aborted)
    assert not isinstance(cut, Exception)  # `except Exception` must not swallow a cancellation
    assert isinstance(UpstreamFailed("x"), RuntimeError)


def test_install_is_idempotent_and_applies_before_handlers():
    logger = logging.getLogger("prefixgate-test-aborts")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        install_log_filter(logger.name)
        install_log_filter(logger.name)
        assert len(logger.filters) == 1
        logger.error("dropped", exc_info=UpstreamFailed("x"))
        logger.error("kept", exc_info=RuntimeError("y"))
    finally:
        logger.removeHandler(handler)
        logger.filters.clear()
    assert seen == ["kept"]
