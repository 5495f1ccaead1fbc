"""The request ledger: one SQLite (WAL) row per finished request, written off the request path.

:class:`Ledger` is a recorder sink: ``handle(record)`` only appends a row tuple to an in-memory
inbox, handed to the writer thread (:mod:`.ledger_writer`) in batches, every
``handoff_interval_s`` or ``handoff_size`` rows; flush, read and close hand the inbox over first.
A failed write never fails a request; a ledger that cannot be opened at start raises
:class:`LedgerError`. :meth:`Ledger.health` reports its counters for ``/prefixgate/health``.

It prices nothing (it stores what the money layer put on the record).
See docs/dashboard.md (the ledger and its failure policy) and docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from proxy.accounting.ledger_schema import COLUMNS, FLAGS_COLUMN, LedgerError, connect, open_ledger, row_for
from proxy.accounting.ledger_writer import STOP, LedgerWriter, ReadJob
from proxy.accounting.records import RequestRecord

__all__ = ["COLUMNS", "Ledger", "LedgerError", "connect", "open_ledger", "row_for"]

log = logging.getLogger("prefixgate.ledger")
CLOSE_TIMEOUT_S = 30.0
CLOSE_POLL_S = 0.005

T = TypeVar("T")


class Ledger:
    """Recorder sink (``handle`` / ``aclose``) writing rows in batches on its own thread. The
    counters it keeps on the event loop (rows dropped or flagged there) are apart from the
    writer's, each with one writer, so no update is lost. A close waits :data:`CLOSE_TIMEOUT_S`
    by default (the shutdown passes its own budget)."""

    def __init__(
        self,
        path: str,
        *,
        log_bodies: bool = False,
        batch_size: int = 256,
        flush_interval_s: float = 0.2,
        max_pending: int = 100_000,
        busy_timeout_s: float = 5.0,
        handoff_interval_s: float = 0.02,
        handoff_size: int = 128,
        trouble_window_s: float = 60.0,
    ) -> None:
        self.path = path
        self.log_bodies = log_bodies
        self.max_pending = max_pending
        self.handoff_interval_s = handoff_interval_s
        self.handoff_size = max(1, handoff_size)
        self.trouble_window_s = trouble_window_s
        self._max_batches = max(1, max_pending // self.handoff_size)
        self._inbox: list[tuple[Any, ...]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._dropped = 0
        self._flagged = 0
        self._last_trouble: float | None = None
        self._closed = False
        self._writer = LedgerWriter(
            open_ledger(path, busy_timeout_s=busy_timeout_s),
            path,
            batch_size=batch_size,
            flush_interval_s=flush_interval_s,
            max_pending=max_pending,
        )

    # -- the recorder's side (event loop) ----------------------------------------------

    def handle(self, record: RequestRecord) -> None:
        """Queue ``record``'s row. Dropped and counted when the ledger is closed (a request that
        finished after the shutdown closed the books: logged too) or when the writer is stuck
        behind ``max_pending`` rows (the disk gone: memory stays bounded). Outside an event loop
        the row is handed over at once."""
        if self._closed:
            self._drop()
            log.warning(
                "ledger %s: request %s finished after the ledger closed; not written",
                self.path,
                record.request_id.encode("unicode_escape").decode("ascii"),
            )
            return
        if len(self._inbox) >= self.max_pending or self._writer.queue.qsize() >= self._max_batches:
            self._drop()
            return
        row = row_for(record, self.log_bodies)
        if row[FLAGS_COLUMN] is not None:
            self._flagged += 1
        self._inbox.append(row)
        if len(self._inbox) >= self.handoff_size:
            self._hand_off()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._hand_off()
                return
            self._timer = loop.call_later(self.handoff_interval_s, self._hand_off)

    def _drop(self) -> None:
        self._dropped += 1
        self._last_trouble = time.monotonic()

    def _hand_off(self) -> None:
        """Give the writer thread every row handled so far, as one list."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._inbox:
            rows, self._inbox = self._inbox, []
            self._writer.queue.put_nowait(rows)

    async def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every row queued before this call has been written; False when some
        could not be (they stay queued for the next try) or the writer did not answer."""
        self._hand_off()
        done = threading.Event()
        self._writer.queue.put_nowait(done)
        if not await asyncio.to_thread(done.wait, timeout_s):
            return False
        return not self._writer.pending

    async def read(self, fn: Callable[[sqlite3.Connection], T], timeout_s: float = 30.0) -> T:
        """``fn(connection)`` on what has been written so far (queued rows flushed first).

        A file ledger is read on a fresh read-only connection in a worker thread (WAL lets
        readers run beside the writer); a ``:memory:`` ledger on the writer thread itself.
        """
        await self.flush()
        if self.path != ":memory:":

            def run() -> T:
                conn = connect(self.path, readonly=True)
                try:
                    return fn(conn)
                finally:
                    conn.close()

            return await asyncio.to_thread(run)
        job = ReadJob(fn)
        self._hand_off()
        self._writer.queue.put_nowait(job)
        if not await asyncio.to_thread(job.done.wait, timeout_s):
            raise LedgerError(f"ledger {self.path}: the writer did not answer within {timeout_s}s")
        if job.error is not None:
            raise job.error
        return job.result

    # -- counters and health ------------------------------------------------------------

    @property
    def written(self) -> int:
        return self._writer.written

    @property
    def failures(self) -> int:
        """Write attempts that raised (a batch, or the writer's own error)."""
        return self._writer.failures

    @property
    def unwritable(self) -> int:
        """Rows SQLite refused even repaired (also in :attr:`dropped`)."""
        return self._writer.unwritable

    @property
    def dropped(self) -> int:
        """Rows lost: queue full, unwritable, or still queued at exit."""
        return self._dropped + self._writer.dropped

    @property
    def flagged(self) -> int:
        """Rows carrying flags: a usage number clamped when made, a cell repaired by the writer."""
        return self._flagged + self._writer.flagged

    def health(self) -> dict[str, Any]:
        """Counters for ``/prefixgate/health``; ``ok`` is False while the writer thread is not
        running or when a failure or a drop happened within ``trouble_window_s``."""
        alive = self._writer.thread.is_alive()
        troubles = [t for t in (self._last_trouble, self._writer.last_trouble) if t is not None]
        recent = bool(troubles) and time.monotonic() - max(troubles) < self.trouble_window_s
        return {
            "ok": alive and not recent,
            "writer_alive": alive,
            "written": self.written,
            "failures": self.failures,
            "dropped": self.dropped,
            "unwritable": self.unwritable,
            "flagged": self.flagged,
            "queued": len(self._inbox) + len(self._writer.pending),
        }

    # -- closing -------------------------------------------------------------------------

    async def aclose(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """Hand every row handled so far to the writer, stop it and wait (at most ``timeout_s``)
        for it to write them and end; True when it did. Polls the thread instead of joining
        it in a worker: a default executor full of calls stuck on a hung dependency cannot
        delay the ledger's last rows. Idempotent; a row handled after it is dropped and counted."""
        self._stop()
        thread = self._writer.thread
        if thread.is_alive():
            deadline = time.monotonic() + timeout_s
            while thread.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(CLOSE_POLL_S)
        return self._stopped(timeout_s)

    def close_sync(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """:meth:`aclose` without an event loop (blocks)."""
        self._stop()
        self._writer.thread.join(timeout_s)
        return self._stopped(timeout_s)

    def close_from_thread(self, timeout_s: float) -> bool:
        """:meth:`close_sync` for another thread than the event loop's (the shutdown watchdog,
        :mod:`proxy.server.watchdog`, while the loop is stuck): takes the inbox without
        touching the loop's hand-off timer. Best effort: a row the loop appends at that very
        moment may be missed."""
        if not self._closed:
            self._closed = True
            rows, self._inbox = self._inbox, []
            if rows:
                self._writer.queue.put_nowait(rows)
            self._writer.queue.put_nowait(STOP)
        self._writer.thread.join(timeout_s)
        return self._stopped(timeout_s)

    def _stop(self) -> None:
        self._hand_off()
        if not self._closed:
            self._closed = True
            self._writer.queue.put_nowait(STOP)

    def _stopped(self, timeout_s: float) -> bool:
        if not self._writer.thread.is_alive():
            return True
        log.warning(
            "ledger %s: the writer did not finish within %.1f s at close; %d rows not written yet",
            self.path,
            timeout_s,
            self._writer.unwritten(),
        )
        return False
