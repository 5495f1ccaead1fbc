"""The last line of a bounded stop: a thread that ends the process at a deadline.

:class:`Watchdog` starts with the server and is armed by the first stop signal for
``--shutdown-timeout`` plus :data:`HARD_S`. At the deadline it logs where every thread and
task was, closes the books (at most :data:`BOOKS_S`) and exits with 128 + the signal.
It is never disarmed.

It does not stop anything gracefully (:mod:`.shutdown` does). See docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable

from proxy.server.stacks import everywhere

log = logging.getLogger("prefixgate.shutdown")

#: past --shutdown-timeout: the whole stop, whatever a dependency does
HARD_S = 3.0
#: its log line (where the stop was stuck), from a thread of its own
SAY_S = 0.1
#: its own close of the books, from its thread: it ends the process within HARD_S + 0.5 s
BOOKS_S = 0.4


class Watchdog:
    def __init__(
        self,
        books: Callable[[float], object] | None = None,
        *,
        exit: Callable[[int], object] = os._exit,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.books = books
        #: the loop whose pending tasks it names
        self.loop: asyncio.AbstractEventLoop | None = None
        self.deadline: float | None = None
        self.code = 1
        self.why = "a stop"
        self.fired = False
        self._exit = exit
        self._clock = clock
        self._read, self._write = os.pipe()
        self._thread: threading.Thread | None = None
        self._armed = False

    def start(self) -> None:
        """Start the thread (idle until :meth:`arm`). Idempotent."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="prefixgate-stop-watchdog", daemon=True)
            self._thread.start()

    def arm(self, after_s: float, code: int, why: str) -> None:
        """End the process ``after_s`` from now unless it ended before. Safe in a signal
        handler; only the first call counts."""
        if self._armed:
            return
        self._armed = True
        self.deadline = self._clock() + after_s
        self.code, self.why = code, why
        try:
            os.write(self._write, b"!")
        except OSError:
            # not started or already torn down: nothing to wake
            pass

    def stand_down(self) -> None:
        """Never fire (for tests and embedders that run a server in a process they keep)."""
        self._armed = True
        self.deadline = None
        try:
            os.write(self._write, b"!")
        except OSError:
            pass

    def _run(self) -> None:
        """Blocks until armed, then sleeps to the deadline and fires; stood down (no deadline):
        returns."""
        try:
            os.read(self._read, 64)
        except OSError:
            return
        while True:
            deadline = self.deadline
            if deadline is None:
                return
            left = deadline - self._clock()
            if left <= 0:
                break
            time.sleep(min(left, 0.2))
        self.fire()

    def fire(self) -> None:
        """The deadline passed and the process still runs: say where, close the books, exit.
        The log line is written from a thread of its own, waited for at most :data:`SAY_S`
        (a log stuck on a full pipe, or on a lock the stuck main thread holds, must not keep
        the process alive); the books get :data:`BOOKS_S`."""
        self.fired = True
        where = threading.Thread(target=self._say, name="prefixgate-stop-watchdog-log", daemon=True)
        where.start()
        where.join(SAY_S)
        if self.books is not None:
            try:
                if not self.books(BOOKS_S):
                    log.error(
                        "shutdown: the ledger did not finish writing within %.1f s; its last rows may be lost",
                        BOOKS_S,
                    )
            except Exception:
                log.exception("shutdown: closing the books from the watchdog failed")
        self._exit(self.code)

    def _say(self) -> None:
        try:
            log.error(
                "shutdown: still running past its limit (%s); closing the books and ending the process. Where it was:%s",
                self.why,
                everywhere(self.loop),
            )
            for handler in logging.getLogger().handlers:
                handler.flush()
        except Exception:
            # the log itself must never keep the process alive
            pass
