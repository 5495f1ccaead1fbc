"""The request ledger: one SQLite (WAL) row per finished request, written off the request path.

:class:`Ledger` is a recorder sink: ``handle(record)`` only appends a row tuple to an in-memory
inbox, handed to a writer thread in batches (every ``handoff_interval_s`` or ``handoff_size``
rows); flush, read and close hand the inbox over first. A failed write never fails a request and
never stops the writer; a ledger that cannot be opened at start raises :class:`LedgerError`.
:meth:`Ledger.health` reports its counters for ``/prefixgate/health``.

This module does not price anything (it stores what the money layer put on the record).
See docs/dashboard.md (the ledger and its failure policy) and docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from proxy.accounting.ledger_schema import (
    COLUMNS,
    FLAGS_COLUMN,
    INSERT,
    LedgerError,
    connect,
    open_ledger,
    row_for,
    storable,
)
from proxy.accounting.records import RequestRecord

__all__ = ["COLUMNS", "Ledger", "LedgerError", "connect", "open_ledger", "row_for"]

log = logging.getLogger("prefixgate.ledger")
LOG_EVERY_S = 60.0  # a disk that stays full must not fill the log too
CLOSE_TIMEOUT_S = (
    30.0  # how long a close waits for the writer by default (the shutdown passes its own budget)
)
CLOSE_POLL_S = 0.005

T = TypeVar("T")


def _database_trouble(exc: BaseException) -> bool:
    """The database failed (busy, locked, full, I/O, corrupt), not the row: keep the rows."""
    return (
        isinstance(exc, (sqlite3.OperationalError, sqlite3.InternalError))
        or type(exc) is sqlite3.DatabaseError
    )


class _Job:
    """A read to run on the writer's own connection (``:memory:`` ledgers)."""

    def __init__(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self, conn: sqlite3.Connection) -> None:
        try:
            self.result = self.fn(conn)
        except BaseException as exc:  # handed back to the awaiting caller
            self.error = exc
        finally:
            self.done.set()


_STOP = object()


class Ledger:
    """Recorder sink (``handle`` / ``aclose``) writing rows in batches on its own thread."""

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
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.max_pending = max_pending
        self.handoff_interval_s = handoff_interval_s
        self.handoff_size = max(1, handoff_size)
        self._max_batches = max(1, max_pending // self.handoff_size)  # lists waiting for the writer
        self._inbox: list[tuple[Any, ...]] = []
        self._timer: asyncio.TimerHandle | None = None
        self.trouble_window_s = trouble_window_s
        self.written = 0
        self.failures = 0  # write attempts that raised (a batch, or the writer's own error)
        # Each counter has one writer (the event loop or the writer thread), so no update is lost.
        self._dropped_loop = 0  # rows refused on the loop: the queue was full
        self._dropped_writer = 0  # unwritable, or still queued at exit
        self.unwritable = 0  # rows SQLite refused even repaired (also in dropped)
        self._flagged_loop = 0  # rows flagged when made (a usage number clamped)
        self._flagged_writer = 0  # rows flagged only by the writer's repair
        self._last_trouble: float | None = None  # monotonic time of the last failure or drop
        self._last_log = -LOG_EVERY_S
        self._stopping = False
        self._closed = False  # aclose() (or a close) began: later rows are dropped and counted
        self._queue: queue.Queue[Any] = queue.Queue()
        self._conn = open_ledger(path, busy_timeout_s=busy_timeout_s)  # LedgerError at start
        self._pending: list[tuple[Any, ...]] = []
        self._thread = threading.Thread(target=self._run, name="prefixgate-ledger", daemon=True)
        self._thread.start()

    # -- the recorder's side (event loop) ----------------------------------------------

    def handle(self, record: RequestRecord) -> None:
        if self._closed:  # a request that finished after the shutdown closed the books: said, counted
            self._dropped_loop += 1
            self._last_trouble = time.monotonic()
            log.warning(
                "ledger %s: request %s finished after the ledger closed; not written",
                self.path,
                record.request_id.encode("unicode_escape").decode("ascii"),
            )
            return
        if len(self._inbox) >= self.max_pending or self._queue.qsize() >= self._max_batches:
            self._dropped_loop += 1  # the writer is stuck (disk gone): keep memory bounded
            self._last_trouble = time.monotonic()
            return
        row = row_for(record, self.log_bodies)
        if row[FLAGS_COLUMN] is not None:
            self._flagged_loop += 1
        self._inbox.append(row)
        if len(self._inbox) >= self.handoff_size:
            self._hand_off()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called outside an event loop: hand over at once
                self._hand_off()
                return
            self._timer = loop.call_later(self.handoff_interval_s, self._hand_off)

    def _hand_off(self) -> None:
        """Give the writer thread every row handled so far, as one list."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._inbox:
            rows, self._inbox = self._inbox, []
            self._queue.put_nowait(rows)

    async def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every row queued before this call has been written; False when some
        could not be (they stay queued for the next try) or the writer did not answer."""
        self._hand_off()
        done = threading.Event()
        self._queue.put_nowait(done)
        if not await asyncio.to_thread(done.wait, timeout_s):
            return False
        return not self._pending

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
        job = _Job(fn)
        self._hand_off()
        self._queue.put_nowait(job)
        if not await asyncio.to_thread(job.done.wait, timeout_s):
            raise LedgerError(f"ledger {self.path}: the writer did not answer within {timeout_s}s")
        if job.error is not None:
            raise job.error
        return job.result

    @property
    def dropped(self) -> int:
        """Rows lost: queue full, unwritable, or still queued at exit."""
        return self._dropped_loop + self._dropped_writer

    @property
    def flagged(self) -> int:
        """Rows carrying flags: a usage number clamped, a cell repaired."""
        return self._flagged_loop + self._flagged_writer

    def health(self) -> dict[str, Any]:
        """Counters for ``/prefixgate/health``; ``ok`` is False while the writer thread is not
        running or when a failure or a drop happened within ``trouble_window_s``."""
        alive = self._thread.is_alive()
        last = self._last_trouble
        recent = last is not None and time.monotonic() - last < self.trouble_window_s
        return {
            "ok": alive and not recent,
            "writer_alive": alive,
            "written": self.written,
            "failures": self.failures,
            "dropped": self.dropped,
            "unwritable": self.unwritable,
            "flagged": self.flagged,
            "queued": len(self._inbox) + len(self._pending),
        }

    async def aclose(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """Hand every row handled so far to the writer, stop it and wait (at most ``timeout_s``)
        for it to write them and end; True when it did. Polls the thread instead of joining
        it in a worker: a default executor full of calls stuck on a hung dependency cannot
        delay the ledger's last rows. Idempotent; a row handled after it is dropped and counted."""
        self._stop()
        if self._thread.is_alive():
            deadline = time.monotonic() + timeout_s
            while self._thread.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(CLOSE_POLL_S)
        return self._stopped(timeout_s)

    def close_sync(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """:meth:`aclose` without an event loop (blocks)."""
        self._stop()
        self._thread.join(timeout_s)
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
                self._queue.put_nowait(rows)
            self._queue.put_nowait(_STOP)
        self._thread.join(timeout_s)
        return self._stopped(timeout_s)

    def _stop(self) -> None:
        self._hand_off()
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_STOP)

    def _stopped(self, timeout_s: float) -> bool:
        if not self._thread.is_alive():
            return True
        log.warning(
            "ledger %s: the writer did not finish within %.1f s at close; %d rows not written yet",
            self.path,
            timeout_s,
            len(self._pending) + sum(len(i) for i in list(self._queue.queue) if isinstance(i, list)),
        )
        return False

    # -- the writer thread ----------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping:
            waiters: list[threading.Event] = []
            try:
                self._gather(waiters)
            except Exception as exc:  # not expected; but a writer that dies loses every later row
                self._failed(exc, "reading its queue")
            try:
                self._write_pending()
            except Exception as exc:  # _write_pending catches its own; this is the last net
                self._failed(exc, "writing")
            finally:
                for waiter in waiters:
                    waiter.set()
        self._dropped_writer += len(self._pending)  # could not be written before exit
        self._pending.clear()
        try:
            self._conn.close()
        except Exception as exc:
            self._failed(exc, "closing")

    def _gather(self, waiters: list[threading.Event]) -> None:
        """Take what the queue holds: rows into ``_pending``, flush waiters into ``waiters``;
        run reads; stop at ``_STOP``, at a waiter or once a batch is full."""
        try:
            # idle: sleep until a row comes; rows left over from a failed write: retry soon
            item = self._queue.get(timeout=self.flush_interval_s if self._pending else None)
        except queue.Empty:
            return
        while True:
            if item is _STOP:
                self._stopping = True
            elif isinstance(item, threading.Event):
                waiters.append(item)
            elif isinstance(item, _Job):
                self._write_pending()
                item.run(self._conn)
            elif item is not None:  # a list of rows from the event loop
                room = max(0, self.max_pending - len(self._pending))
                self._pending.extend(item[:room])
                lost = len(item) - min(room, len(item))
                if lost:
                    self._dropped_writer += lost
                    self._last_trouble = time.monotonic()
            if self._stopping or waiters or len(self._pending) >= self.batch_size:
                return
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return

    def _write_pending(self) -> None:
        """Write every pending row, a batch per transaction; never raises (see the module's
        failure policy). Rows the database could not take for now stay pending."""
        while self._pending:
            batch = self._pending[: self.batch_size]
            try:
                with self._conn:
                    self._conn.executemany(INSERT, batch)
            except Exception as exc:
                self._failed(exc, "writing a batch")
                if _database_trouble(exc):  # busy, locked, full, I/O: retry on the next flush
                    return
                done = self._write_rows(batch)  # a row it will not take, or the unexpected
            else:
                done = len(batch)
                self.written += done
            del self._pending[:done]
            if done < len(batch):
                return

    def _write_rows(self, batch: list[tuple[Any, ...]]) -> int:
        """How many rows of ``batch`` are done (written, or dropped as unwritable); the
        rest wait for the next flush (the database itself failed)."""
        for i, row in enumerate(batch):
            try:
                if not self._write_row(row):
                    return i
            except Exception as exc:  # not expected: keep the rest for the next flush
                self._failed(exc, "writing a row")
                return i
        return len(batch)

    def _write_row(self, row: tuple[Any, ...]) -> bool:
        """Write one row (repaired if need be) or drop it as unwritable; False: try later."""
        try:
            self._insert(row)
        except Exception as exc:
            if _database_trouble(exc):
                return False
            error = exc
            fixed, flags = storable(row)
            if flags:
                try:
                    self._insert(fixed)
                except Exception as exc2:
                    if _database_trouble(exc2):
                        return False
                    error = exc2
                else:
                    self.written += 1
                    if row[FLAGS_COLUMN] is None:  # already counted when it was made
                        self._flagged_writer += 1
                    return True
            if not self._usable():
                return False
            self.unwritable += 1
            self._dropped_writer += 1
            self._last_trouble = time.monotonic()
            request_id = row[0] if row and isinstance(row[0], str) else "?"
            log.error(
                "ledger %s: request %s cannot be stored (%s); row dropped",
                self.path,
                request_id.encode("unicode_escape").decode("ascii"),
                type(error).__name__,
            )
            return True
        self.written += 1
        return True

    def _insert(self, row: tuple[Any, ...]) -> None:
        with self._conn:
            self._conn.execute(INSERT, row)

    def _usable(self) -> bool:
        try:
            self._conn.execute("SELECT 1").fetchone()
            return True
        except Exception:
            return False

    def _failed(self, exc: BaseException, doing: str) -> None:
        self.failures += 1
        now = self._last_trouble = time.monotonic()
        if now - self._last_log >= LOG_EVERY_S:
            self._last_log = now
            detail = f": {exc}" if isinstance(exc, sqlite3.Error) else ""  # others may quote a row's text
            log.warning(
                "ledger %s: %s failed (%s%s); %d failures so far",
                self.path,
                doing,
                type(exc).__name__,
                detail,
                self.failures,
            )
