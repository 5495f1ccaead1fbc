"""The ledger's writer thread: row lists in, SQLite batches out, and no error ever raised.

:class:`LedgerWriter` takes from its queue lists of rows, flush waiters, reads to run on its own
connection (:class:`ReadJob`, for ``:memory:`` ledgers) and :data:`STOP`, and writes the rows in
batches, one transaction each. A batch the database cannot take now (busy, locked, full, I/O)
stays pending for the next try; one refused for its content is written row by row, a refused row
repaired (:func:`~proxy.accounting.ledger_schema.storable`) or dropped as unwritable, and counted.

It builds no rows and runs nothing on the event loop (:mod:`.ledger` does). See docs/dashboard.md.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from proxy.accounting.ledger_schema import FLAGS_COLUMN, INSERT, storable

log = logging.getLogger("prefixgate.ledger")
LOG_EVERY_S = 60.0
STOP = object()


def database_trouble(exc: BaseException) -> bool:
    """The database failed (busy, locked, full, I/O, corrupt), not the row: keep the rows."""
    return (
        isinstance(exc, (sqlite3.OperationalError, sqlite3.InternalError))
        or type(exc) is sqlite3.DatabaseError
    )


class ReadJob:
    """A read to run on the writer's own connection; its error is handed back to the caller."""

    def __init__(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self, conn: sqlite3.Connection) -> None:
        try:
            self.result = self.fn(conn)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()


class LedgerWriter:
    """The thread, and the counters only it writes (so no update is lost): ``written``,
    ``failures`` (write attempts that raised), ``dropped`` (unwritable, or still pending at exit),
    ``unwritable`` (refused even repaired; also in ``dropped``), ``flagged`` (rows flagged only by
    the repair) and ``last_trouble`` (monotonic time of the last failure or drop). A failure is
    logged at most once per :data:`LOG_EVERY_S`: a disk that stays full must not fill the log too."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: str,
        *,
        batch_size: int,
        flush_interval_s: float,
        max_pending: int,
    ) -> None:
        self.conn, self.path = conn, path
        self.batch_size, self.flush_interval_s, self.max_pending = batch_size, flush_interval_s, max_pending
        self.queue: queue.Queue[Any] = queue.Queue()
        self.pending: list[tuple[Any, ...]] = []
        self.written = self.failures = self.dropped = self.unwritable = self.flagged = 0
        self.last_trouble: float | None = None
        self._last_log = -LOG_EVERY_S
        self._stopping = False
        self.thread = threading.Thread(target=self._run, name="prefixgate-ledger", daemon=True)
        self.thread.start()

    def unwritten(self) -> int:
        """Rows pending or still queued (a look from another thread: approximate)."""
        return len(self.pending) + sum(len(i) for i in list(self.queue.queue) if isinstance(i, list))

    def _run(self) -> None:
        while not self._stopping:
            waiters: list[threading.Event] = []
            try:
                self._gather(waiters)
            except Exception as exc:
                self._failed(exc, "reading its queue")
            try:
                self._write_pending()
            except Exception as exc:
                self._failed(exc, "writing")
            finally:
                for waiter in waiters:
                    waiter.set()
        self.dropped += len(self.pending)
        self.pending.clear()
        try:
            self.conn.close()
        except Exception as exc:
            self._failed(exc, "closing")

    def _gather(self, waiters: list[threading.Event]) -> None:
        """Take what the queue holds: rows into ``pending``, flush waiters into ``waiters``; run
        reads; stop at :data:`STOP`, at a waiter or once a batch is full. Idle, it sleeps until
        something comes; with rows left from a failed write it retries every ``flush_interval_s``."""
        try:
            item = self.queue.get(timeout=self.flush_interval_s if self.pending else None)
        except queue.Empty:
            return
        while True:
            if item is STOP:
                self._stopping = True
            elif isinstance(item, threading.Event):
                waiters.append(item)
            elif isinstance(item, ReadJob):
                self._write_pending()
                item.run(self.conn)
            elif item is not None:
                self._take(item)
            if self._stopping or waiters or len(self.pending) >= self.batch_size:
                return
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return

    def _take(self, rows: list[tuple[Any, ...]]) -> None:
        room = max(0, self.max_pending - len(self.pending))
        self.pending.extend(rows[:room])
        lost = len(rows) - min(room, len(rows))
        if lost:
            self.dropped += lost
            self.last_trouble = time.monotonic()

    def _write_pending(self) -> None:
        """Write every pending row, a batch per transaction; never raises. Rows the database
        could not take for now stay pending."""
        while self.pending:
            batch = self.pending[: self.batch_size]
            try:
                with self.conn:
                    self.conn.executemany(INSERT, batch)
            except Exception as exc:
                self._failed(exc, "writing a batch")
                if database_trouble(exc):
                    return
                done = self._write_rows(batch)
            else:
                done = len(batch)
                self.written += done
            del self.pending[:done]
            if done < len(batch):
                return

    def _write_rows(self, batch: list[tuple[Any, ...]]) -> int:
        """How many rows of ``batch`` are done (written, or dropped as unwritable); the rest wait
        for the next flush (the database itself failed, or the unexpected)."""
        for i, row in enumerate(batch):
            try:
                if not self._write_row(row):
                    return i
            except Exception as exc:
                self._failed(exc, "writing a row")
                return i
        return len(batch)

    def _write_row(self, row: tuple[Any, ...]) -> bool:
        """Write one row (repaired if need be) or drop it as unwritable; False: try later."""
        try:
            self._insert(row)
        except Exception as exc:
            if database_trouble(exc):
                return False
            return self._write_repaired(row, exc)
        self.written += 1
        return True

    def _write_repaired(self, row: tuple[Any, ...], error: Exception) -> bool:
        """``row`` with the cells SQLite refused nulled and named in its flags; dropped (True) when
        even that is refused while the database answers; False: the database failed, try later."""
        fixed, flags = storable(row)
        if flags:
            try:
                self._insert(fixed)
            except Exception as exc:
                if database_trouble(exc):
                    return False
                error = exc
            else:
                self.written += 1
                if row[FLAGS_COLUMN] is None:
                    self.flagged += 1
                return True
        if not self._usable():
            return False
        self.unwritable += 1
        self.dropped += 1
        self.last_trouble = time.monotonic()
        request_id = row[0] if row and isinstance(row[0], str) else "?"
        log.error(
            "ledger %s: request %s cannot be stored (%s); row dropped",
            self.path,
            request_id.encode("unicode_escape").decode("ascii"),
            type(error).__name__,
        )
        return True

    def _insert(self, row: tuple[Any, ...]) -> None:
        with self.conn:
            self.conn.execute(INSERT, row)

    def _usable(self) -> bool:
        try:
            self.conn.execute("SELECT 1").fetchone()
            return True
        except Exception:
            return False

    def _failed(self, exc: BaseException, doing: str) -> None:
        """Count and (rate-limited) log a failure; only an :class:`sqlite3.Error`'s text is
        logged, since others may quote a row's content."""
        self.failures += 1
        now = self.last_trouble = time.monotonic()
        if now - self._last_log >= LOG_EVERY_S:
            self._last_log = now
            detail = f": {exc}" if isinstance(exc, sqlite3.Error) else ""
            log.warning(
                "ledger %s: %s failed (%s%s); %d failures so far",
                self.path,
                doing,
                type(exc).__name__,
                detail,
                self.failures,
            )
