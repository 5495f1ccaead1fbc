"""A remote prefix store behind a deadline and a circuit breaker.

:class:`GuardedStore` wraps a store that does I/O (Redis). Every look-up has its own
deadline (``--store-timeout``, default :data:`DEFAULT_DEADLINE_S` = 100 ms), independent
of redis-py's socket timeouts; a look-up that fails or misses it answers ``None``
("unknown") and opens the :class:`~proxy.store.breaker.Breaker`. While it is open,
:meth:`GuardedStore.ready` says False and the request path skips the store without
awaiting anything; at most one probe (``PING``, under the same deadline) runs at a time and
at most one per second, started in the background by a request, or inline by
``/prefixgate/health``. A probe that answers closes the breaker.

A timed-out Redis call is cancelled mid-command; redis-py's asyncio connection disconnects
itself on any ``BaseException`` while sending or reading (``send_packed_command`` and
``read_response``), so a late reply can never be read by the next command on that
connection. :func:`guarded` wraps any store but a :class:`~proxy.store.MemoryStore`, which
never waits and gets no breaker. This module does not decide what the store holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable, Sequence

from proxy.store.breaker import Breaker
from proxy.store.base import PrefixStore
from proxy.store.memory import MemoryStore

log = logging.getLogger("prefixgate.store")

DEFAULT_DEADLINE_S = 0.1
PROBE_INTERVAL_S = 1.0


class GuardedStore:
    def __init__(self, inner: PrefixStore, deadline_s: float = DEFAULT_DEADLINE_S,
                 probe_interval_s: float = PROBE_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        if deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        self.inner = inner
        self.deadline_s = deadline_s
        self.breaker = Breaker(probe_interval_s, clock)
        self._probe_task: asyncio.Task | None = None

    def ready(self) -> bool:
        """True while the breaker is closed. While it is open: False, and a background
        probe starts when one is due (never awaited here)."""
        if self.breaker.allow():
            return True
        if self.breaker.try_probe():
            self._probe_task = asyncio.get_running_loop().create_task(self._probe())
        return False

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None:
        """The inner store's answer, or ``None`` when skipped, failed or past the deadline."""
        if not self.ready():
            return None
        try:
            async with asyncio.timeout(self.deadline_s):
                return await self.inner.seen(tenant, provider, hashes)
        except Exception as exc:  # CancelledError (the client left) is not the store's fault
            self._failed(exc)
            return None

    async def health(self) -> dict:
        """The store's state for ``/prefixgate/health``, never longer than the deadline:
        a ``PING`` when closed, a probe when open and one is due, else the breaker as is."""
        if self.breaker.allow():
            try:
                await self._ping()
            except Exception as exc:
                self._failed(exc)
        elif self.breaker.try_probe():
            await self._probe()
        return {"ok": self.breaker.allow(), "deadline_ms": round(self.deadline_s * 1000, 3), **self.breaker.to_json()}

    async def aclose(self) -> None:
        task = self._probe_task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        await self.inner.aclose()

    def _failed(self, exc: BaseException) -> None:
        name = type(exc).__name__
        if self.breaker.failure(name):
            log.warning("prefix store failed (%s, deadline %.0f ms): skipping it, probing at most once per %.0f s",
                        name, self.deadline_s * 1000, self.breaker.probe_interval_s)

    async def _ping(self) -> None:
        ping = getattr(self.inner, "ping", None)
        if ping is None:  # nothing cheaper to ask: let the next real call decide
            return
        async with asyncio.timeout(self.deadline_s):
            if not await ping():
                raise ConnectionError("ping answered false")

    async def _probe(self) -> None:
        """One probe granted by :meth:`Breaker.try_probe`; closes the breaker when it answers."""
        ok, error = False, None
        try:
            await self._ping()
            ok = True
        except Exception as exc:
            error = type(exc).__name__
        finally:  # also when cancelled: the next probe must stay possible
            if self.breaker.probe_done(ok, error):
                log.info("prefix store answers again: using it")


def guarded(store: PrefixStore, deadline_s: float = DEFAULT_DEADLINE_S) -> PrefixStore:
    """``store`` behind a :class:`GuardedStore`, unless it never waits (memory) or already is."""
    if isinstance(store, (MemoryStore, GuardedStore)):
        return store
    return GuardedStore(store, deadline_s)
