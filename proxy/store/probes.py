"""Probing a store scope that failed, and the recovery work run when it comes back (:class:`Probes`).

A probe, granted by its scope's :class:`~proxy.store.breaker.Breaker`, runs in the background: a
``PING`` under the look-up deadline, then, where the scope ``recovers``, the recovery work under
:data:`RECOVERY_DEADLINE_S`; only when both succeed does it close the breaker. The recovery work
also runs, once at a time, when the store reports that its server lost its data.

It does not decide when to probe (the breaker does) or bound look-ups (:mod:`proxy.store.guard`).
See docs/store.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from proxy.store.breaker import Breaker
from proxy.store.scopes import Scope, ScopeBreakers, scope_name

log = logging.getLogger("prefixgate.store")

#: the recovery work (a Redis round trip or two), inside a probe or after lost data
RECOVERY_DEADLINE_S = 5.0

Work = Callable[[], Awaitable[object]]


class Probes:
    def __init__(self, scopes: ScopeBreakers, deadline_s: float) -> None:
        self.scopes = scopes
        self.deadline_s = deadline_s
        self.recovery: list[Work] = []
        self.running: dict[Scope, asyncio.Task] = {}
        self.latest: asyncio.Task | None = None
        self.recovery_task: asyncio.Task | None = None

    def start(self, scope: Scope, b: Breaker) -> asyncio.Task:
        """Run the probe ``b`` just granted (:meth:`Breaker.try_probe`) as a background task."""
        try:
            task = asyncio.get_running_loop().create_task(self._probe(scope, b))
        except BaseException:
            # no loop: the probe granted never runs, so it must not stay "in flight"
            b.probe_done(False, "RuntimeError")
            raise
        self.latest = self.running[scope] = task
        task.add_done_callback(
            lambda t: self.running.pop(scope, None) if self.running.get(scope) is t else None
        )
        return task

    async def ping(self, scope: Scope = None) -> None:
        """One ``PING`` (of ``scope`` when the store is scoped) under the deadline; raises when it
        fails or answers false. A store with nothing cheaper to ask answers True."""
        ping = self.scopes.inner.ping
        async with asyncio.timeout(self.deadline_s):
            if not await (ping(scope) if self.scopes.scoped else ping()):
                raise ConnectionError("ping answered false")

    async def _probe(self, scope: Scope, b: Breaker) -> None:
        ok, error = False, None
        try:
            await self.ping(scope)
            if self.recovery and self.scopes.inner.recovers(scope):
                async with asyncio.timeout(RECOVERY_DEADLINE_S):
                    await self.recover()
            ok = True
        except Exception as exc:
            error = type(exc).__name__
        finally:
            # also when cancelled: the next probe must stay possible
            if b.probe_done(ok, error):
                log.info(
                    "prefix store answers again%s: using it",
                    "" if scope is None else f" on {scope_name(scope)}",
                )
                self.scopes.closed(scope, b)

    async def recover(self) -> None:
        for work in self.recovery:
            await work()

    def lost_data(self) -> None:
        """The store saw its server lose its data (a Redis restarted without persistence): run
        the recovery work in the background, once at a time."""
        if not self.recovery or (self.recovery_task is not None and not self.recovery_task.done()):
            return

        async def run() -> None:
            try:
                async with asyncio.timeout(RECOVERY_DEADLINE_S):
                    await self.recover()
            except Exception as exc:
                log.warning(
                    "prefix store: recovery work after Redis lost its data failed (%s)", type(exc).__name__
                )

        self.recovery_task = asyncio.get_running_loop().create_task(run())

    def tasks(self) -> list[asyncio.Task]:
        """The probes and the recovery work still running."""
        return [t for t in (*self.running.values(), self.recovery_task) if t is not None and not t.done()]
