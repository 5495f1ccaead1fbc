"""The request ledger: one SQLite (WAL) row per finished request, written off the request path.

:class:`Ledger` is a recorder sink. ``handle(record)`` only turns the record into a row
tuple and appends it to an in-memory inbox (no I/O, no thread wake-up on the event loop);
the inbox is handed to a background thread as one list every ``handoff_interval_s`` or
once ``handoff_size`` rows wait (waking a thread per row cost ~0.5 ms under load). The
thread writes rows in batches (one transaction per batch); ``flush()``, ``read()``,
``aclose()`` and ``close_sync()`` hand the inbox over first, so nothing handled is lost.

What a row holds: time, tenant hash, provider, model, route, status, latency, time to first
byte, usage, cost / saved / missed, repeated-prefix length, miss reason, rewrites and the
chain of prefix hashes (first 8 bytes of each, hex). Prompt content only with
``--log-bodies`` (``record.body``, which never carries headers, so never an API key).

Failure policy (chosen, documented, tested):

- **At start** a ledger that is not a SQLite database, cannot be created, or stays locked
  by another writer past ``busy_timeout_s`` raises :class:`LedgerError` with the path and
  the reason: ``prefixgate serve`` exits with that message and does not start.
- **While serving** a failed write never fails a request: the proxy keeps forwarding, the
  batch stays queued and is retried on the next flush, and ``failures`` counts each failed
  attempt (exported as ``prefixgate_ledger_failures_total``). Rows beyond ``max_pending``
  are dropped and counted in ``dropped``, so memory stays bounded if the disk is gone.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from typing import Any, Callable, TypeVar

from analyzer.pricing import PriceTable
from proxy.ledger_schema import COLUMNS, INSERT, LedgerError, connect, open_ledger, row_for
from proxy.records import RequestRecord

__all__ = ["COLUMNS", "Ledger", "LedgerError", "connect", "open_ledger", "row_for"]

T = TypeVar("T")


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

    def __init__(self, path: str, *, prices: PriceTable | None = None, log_bodies: bool = False,
                 batch_size: int = 256, flush_interval_s: float = 0.2, max_pending: int = 100_000,
                 busy_timeout_s: float = 5.0, handoff_interval_s: float = 0.02, handoff_size: int = 128) -> None:
        self.path = path
        self.prices = prices
        self.log_bodies = log_bodies
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.max_pending = max_pending
        self.handoff_interval_s = handoff_interval_s
        self.handoff_size = max(1, handoff_size)
        self._max_batches = max(1, max_pending // self.handoff_size)  # lists waiting for the writer
        self._inbox: list[tuple[Any, ...]] = []
        self._timer: asyncio.TimerHandle | None = None
        self.written = 0
        self.failures = 0
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue()
        self._conn = open_ledger(path, busy_timeout_s=busy_timeout_s)  # LedgerError at start
        self._pending: list[tuple[Any, ...]] = []
        self._thread = threading.Thread(target=self._run, name="prefixgate-ledger", daemon=True)
        self._thread.start()

    # -- the recorder's side (event loop) ----------------------------------------------

    def handle(self, record: RequestRecord) -> None:
        if len(self._inbox) >= self.max_pending or self._queue.qsize() >= self._max_batches:
            self.dropped += 1  # the writer is stuck (disk gone): keep memory bounded
            return
        self._inbox.append(row_for(record, self.prices, self.log_bodies))
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

    async def aclose(self) -> None:
        self._hand_off()
        self._queue.put_nowait(_STOP)
        await asyncio.to_thread(self._thread.join, 30.0)

    def close_sync(self) -> None:
        self._hand_off()
        self._queue.put_nowait(_STOP)
        self._thread.join(30.0)

    # -- the writer thread ----------------------------------------------------------------

    def _run(self) -> None:
        stop = False
        while not stop:
            try:
                # idle: sleep until a row comes; rows left over from a failed write: retry soon
                item = self._queue.get(timeout=self.flush_interval_s if self._pending else None)
            except queue.Empty:
                item = None
            waiters: list[threading.Event] = []
            while True:
                if item is _STOP:
                    stop = True
                elif isinstance(item, threading.Event):
                    waiters.append(item)
                elif isinstance(item, _Job):
                    self._write_pending()
                    item.run(self._conn)
                elif item is not None:  # a list of rows from the event loop
                    room = max(0, self.max_pending - len(self._pending))
                    self._pending.extend(item[:room])
                    self.dropped += len(item) - min(room, len(item))
                if stop or waiters or len(self._pending) >= self.batch_size:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            self._write_pending()
            for waiter in waiters:
                waiter.set()
        self.dropped += len(self._pending)  # could not be written before exit
        self._pending.clear()
        self._conn.close()

    def _write_pending(self) -> None:
        while self._pending:
            batch = self._pending[: self.batch_size]
            try:
                with self._conn:
                    self._conn.executemany(INSERT, batch)
            except sqlite3.Error:
                self.failures += 1  # keep the rows; the next flush tries again
                return
            del self._pending[: len(batch)]
            self.written += len(batch)
