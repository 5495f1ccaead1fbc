"""Stopping the proxy: a bounded graceful shutdown that always closes the books.

:class:`ProxyServer` is uvicorn's server with its shutdown replaced by one sequence timed from
the first stop signal: stop accepting, wait ``--shutdown-timeout`` for requests in flight (a
second Ctrl-C ends the wait), cut and record the rest, run the app's lifespan shutdown, always
write the ledger's rows, cancel what is left; each step is bounded and logs where it was stuck.
The first signal also arms the :class:`~.watchdog.Watchdog`, so every stop ends within the
timeout plus 3.5 s. :func:`serve` runs it as ``uvicorn.run`` would.

This module does not handle requests. See docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import socket
import sys
import time
from typing import Protocol

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from proxy.server.stacks import task_stack
from proxy.server.watchdog import HARD_S, Watchdog

log = logging.getLogger("prefixgate.shutdown")

#: how long cut requests get to write their records
CUT_GRACE_S = 1.0
#: the listening sockets' close
LISTENERS_S = 0.1
#: the app's shutdown (:mod:`proxy.server.closing`: 0.8 + 0.1 + 0.5 of it)
LIFESPAN_S = 1.5
#: the ledger's close when the app's shutdown did not close it: at least this, plus what the steps before left
BOOKS_S = 0.2
#: tasks left over, cancelled
TIDY_S = 0.1
POLL_S = 0.05


class Books(Protocol):
    """What the shutdown closes last: the ledger (:class:`proxy.accounting.ledger.Ledger`)."""

    async def aclose(self, timeout_s: float) -> bool: ...

    def close_from_thread(self, timeout_s: float) -> bool: ...


def _noop() -> None:
    return None


class ProxyServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, books: Books | None = None) -> None:
        super().__init__(config)
        self.books = books
        #: ``time.monotonic()`` of the first stop signal
        self.stop_at: float | None = None
        self.watchdog = Watchdog(books.close_from_thread if books is not None else None)
        self._loop: asyncio.AbstractEventLoop | None = None
        #: tasks running before the server (its caller's): never cancelled by it
        self._theirs: set[asyncio.Task] = set()

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = self.watchdog.loop = asyncio.get_running_loop()
        self._theirs = asyncio.all_tasks()
        self.watchdog.start()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame) -> None:
        """uvicorn's handler (first signal: shut down; a second Ctrl-C: cut now), plus: the
        first one times the stop and arms the watchdog (only a signal does: a server stopped
        by its embedder must not end the embedder's process); each one wakes the loop."""
        super().handle_exit(sig, frame)
        if self.stop_at is None:
            self.stop_at = time.monotonic()
            grace = self.config.timeout_graceful_shutdown
            if grace is not None:
                self.watchdog.arm(
                    grace + HARD_S,
                    128 + sig,
                    f"{signal.Signals(sig).name}, then --shutdown-timeout {grace:g}s + {HARD_S:g}s",
                )
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(_noop)
            except RuntimeError:
                pass

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """The sequence (docs/shutdown.md): stop accepting, drain, cut, the app's shutdown, the
        books, tidy. A server stopped without a signal (a request limit, an embedder) is timed
        from now and arms no watchdog."""
        if self.stop_at is None:
            self.stop_at = time.monotonic()
        log.info("shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        grace = self.config.timeout_graceful_shutdown
        await self._drain(grace, math.inf if grace is None else self.stop_at + grace)
        cut_to_books_end = time.monotonic() + CUT_GRACE_S + LISTENERS_S + LIFESPAN_S + BOOKS_S
        await self._cut()
        for server in self.servers:
            try:
                await asyncio.wait_for(server.wait_closed(), LISTENERS_S)
            except TimeoutError:
                pass
        await self._app_shutdown()
        await self._close_books(max(BOOKS_S, cut_to_books_end - time.monotonic()))
        await self._tidy()

    async def _drain(self, timeout_s: float | None, until: float) -> None:
        """Waits for connections and requests to finish, until ``until`` (``time.monotonic``)."""
        state = self.server_state
        if not (state.connections or state.tasks):
            return
        limit = "without limit" if timeout_s is None else f"up to {timeout_s:g}s"
        log.info(
            "waiting %s for %d request(s) in flight (Ctrl-C again to cut them now)", limit, len(state.tasks)
        )
        while (
            (state.connections or state.tasks)
            and not self.force_exit
            and (left := until - time.monotonic()) > 0
        ):
            await asyncio.sleep(min(POLL_S, left))

    async def _cut(self) -> None:
        tasks = [task for task in self.server_state.tasks if not task.done()]
        if not tasks:
            return
        why = (
            "second Ctrl-C"
            if self.force_exit
            else f"--shutdown-timeout {self.config.timeout_graceful_shutdown:g}s"
        )
        log.warning("cutting %d request(s) still in flight (%s)", len(tasks), why)
        for task in tasks:
            task.cancel("shutdown timeout")
        _, pending = await asyncio.wait(tasks, timeout=CUT_GRACE_S)
        if pending:
            log.warning(
                "%d cut request(s) did not finish within %.1fs; going on (one stuck in: %s)",
                len(pending),
                CUT_GRACE_S,
                task_stack(next(iter(pending))),
            )

    async def _app_shutdown(self) -> None:
        """The app's lifespan shutdown, at most :data:`LIFESPAN_S` (uvicorn's waits without limit)."""
        shutting = asyncio.ensure_future(self.lifespan.shutdown())
        done, _ = await asyncio.wait({shutting}, timeout=LIFESPAN_S)
        if shutting in done:
            shutting.result()
            return
        lifespan = [
            t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__qualname__", "") == "LifespanOn.main"
        ]
        log.warning(
            "shutdown: the app's shutdown did not finish within %.1f s; going on (stuck in: %s)",
            LIFESPAN_S,
            task_stack(lifespan[0]) if lifespan else "?",
        )

    async def _close_books(self, timeout_s: float) -> None:
        """The ledger's close; its own failure is logged and the stop goes on."""
        if self.books is not None:
            try:
                await self.books.aclose(timeout_s)
            except Exception:
                log.exception("shutdown: closing the ledger failed")

    async def _tidy(self) -> None:
        mine = asyncio.all_tasks() - self._theirs - {asyncio.current_task()}
        left = [t for t in mine if not t.done()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=TIDY_S)


def serve(config: uvicorn.Config, books: Books | None = None) -> None:
    """Runs ``config``'s app until a signal stops it, closing ``books`` last; exits 3 if it never
    started. The Ctrl-C uvicorn re-raises after its shutdown ends it quietly."""
    server = ProxyServer(config, books)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started:
        sys.exit(STARTUP_FAILURE)
