"""A remote prefix store behind a deadline and circuit breakers (:class:`GuardedStore`, :func:`guarded`).

Each look-up has its own deadline (``--store-timeout``); one that fails or misses it answers
None ("unknown") and opens the breaker of its scope (:mod:`.scopes`: a Cluster node, else the
whole store), probed in the background (:mod:`.probes`). It also holds the store skipped while
:meth:`~GuardedStore.hold_until`'s work runs, warms it up at start (:mod:`.warmup`), reports its
health and counts look-ups by outcome. A :class:`~proxy.store.MemoryStore` is never wrapped.

It does not decide what the store holds, nor talk to Redis itself. See docs/store.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker
from proxy.store.memory import MemoryStore
from proxy.store.probes import Probes
from proxy.store.scopes import Scope, ScopeBreakers, scope_name
from proxy.store.warmup import WarmUp

log = logging.getLogger("prefixgate.store")

DEFAULT_DEADLINE_S = 0.1
#: at close, how long the cancelled probes, hold and recovery work get to end
CLOSE_TASKS_S = 0.2
OK, UNAVAILABLE, SKIPPED = "ok", "unavailable", "skipped"


class GuardedStore(PrefixStore):
    def __init__(
        self,
        inner: PrefixStore,
        deadline_s: float = DEFAULT_DEADLINE_S,
        clock: Callable[[], float] = time.monotonic,
        *,
        breaker: Breaker | None = None,
    ) -> None:
        if deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        self.inner = inner
        self.deadline_s = deadline_s
        self.breaker = breaker if breaker is not None else Breaker(clock=clock)
        self.scopes = ScopeBreakers(inner, self.breaker)
        self.probes = Probes(self.scopes, deadline_s)
        self.warmup = WarmUp(inner.warm, deadline_s, self._warm_failed)
        #: why the store is skipped whatever the breakers say (:meth:`hold_until`); None: not held
        self.held: str | None = None
        self.lookups = {OK: 0, UNAVAILABLE: 0, SKIPPED: 0}
        self._hold_task: asyncio.Task | None = None
        inner.on_lost_data = self.probes.lost_data

    @property
    def scoped(self) -> bool:
        return self.scopes.scoped

    @property
    def breakers(self) -> dict[Scope, Breaker]:
        """The breakers by scope (None: the whole store's, :attr:`breaker`)."""
        return self.scopes.breakers

    def ready(self, tenant: str | None = None) -> bool:
        """True while the breaker of ``tenant``'s scope is closed, nothing holds the store and
        the tenant was hashed with the replicas' current shared secret (a
        :class:`proxy.tenant.Tenant` that is not ``recordable`` is skipped). Else False (the
        caller skips the store; counted), and a background probe of that scope starts when
        one is due (never awaited here). A scope that never failed gets no breaker."""
        scope = self.scopes.scope_of(tenant)
        b = self.scopes.get(scope)
        if (b is None or b.state == "closed") and self.held is None and getattr(tenant, "recordable", True):
            return True
        self.lookups[SKIPPED] += 1
        if b is not None and b.try_probe():
            self.probes.start(scope, b)
        return False

    def warm_up(self) -> asyncio.Task | None:
        """Start the warm-up (:mod:`.warmup`) in the background, never awaited by start; a
        failure counts once, against the whole store. Called at the app's start, else by the
        first look-up; later calls return the same task (None: nothing to warm, or no loop)."""
        return self.warmup.start()

    def _warm_failed(self, exc: Exception) -> None:
        if self.scopes.known() and self.scopes.scoped:
            # the map is in: each node's own look-ups decide about that node
            log.warning("prefix store: warm-up did not finish (%s); look-ups go on", type(exc).__name__)
        else:
            self._failed(exc, None)

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None:
        """The inner store's answer, or ``None`` when skipped, failed or past the deadline.
        While the warm-up runs, a look-up first waits for it (up to its ``first_lookup_s``;
        past that it is skipped, which is not the store's failure)."""
        if not self.ready(tenant):
            return None
        warm = self.warmup.start()
        if warm is not None and not warm.done():
            await asyncio.wait({warm}, timeout=self.warmup.first_lookup_s)
            if not warm.done():
                self.lookups[SKIPPED] += 1
                return None
            if not self.ready(tenant):
                return None
        try:
            async with asyncio.timeout(self.deadline_s):
                found = await self.inner.seen(tenant, provider, hashes)
        except Exception as exc:
            self.lookups[UNAVAILABLE] += 1
            self._failed(exc, self.scopes.scope_of(tenant))
            return None
        self.lookups[OK] += 1
        return found

    def on_recovery(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work()`` whenever the store comes back (:mod:`.probes`); it must bound itself."""
        self.probes.recovery.append(work)

    def hold_until(self, work: Callable[[], Awaitable[object]], cause: str) -> None:
        """Skip the store (``ready()`` False, health not ok with ``cause``) until ``work()``,
        run now as a background task, ends; :meth:`aclose` cancels it. Needs a running loop.
        A ``work()`` that fails never releases it: the store would be used before it may be."""
        self.held = cause

        async def run() -> None:
            try:
                await work()
            except Exception:
                log.exception(
                    "prefix store held (%s): the work it waits for failed; the store stays skipped", cause
                )
                return
            self.held = None

        self._hold_task = asyncio.get_running_loop().create_task(run())

    async def health(self) -> dict:
        """The store's state for ``/prefixgate/health``, never much longer than the deadline:
        per scope, a ``PING`` when closed, a probe when open and one is due, else the breaker
        as is. The top-level breaker fields are the whole store's, or, when scopes are open,
        the latest opened one's; ``cause`` says why it is not ok: the hold's reason, else the
        last error (naming the open scopes of a scoped store); ``scopes`` counts them."""
        checked = self.scopes.to_check()
        await asyncio.gather(*(self._check(scope) for scope in checked))
        opened = self.scopes.opened()
        shown = max(opened.values(), key=lambda b: b.opened_at or 0.0) if opened else self.breaker
        ok = not opened and self.held is None
        cause = None
        if not ok:
            cause = self.held or shown.last_error
            if self.held is None and self.scopes.scoped:
                names = ", ".join(sorted(map(scope_name, opened))[:8])
                skipped = f"{len(opened)} of {len(checked | set(opened))} store scopes skipped: {names}"
                cause = f"{shown.last_error} ({skipped})"
        return {
            "ok": ok,
            "cause": cause,
            "held": self.held,
            "warming": self.warmup.running,
            "deadline_ms": round(self.deadline_s * 1000, 3),
            **shown.to_json(),
            "lookups": dict(self.lookups),
            "scopes": self.scopes.to_json(checked, opened),
        }

    async def _check(self, scope: Scope) -> None:
        """Health's look at one scope. A probe runs in the background (its recovery work may
        take seconds) and is awaited here at most about the deadline."""
        b = self.scopes.breaker_for(scope)
        if b.allow():
            try:
                await self.probes.ping(scope)
            except Exception as exc:
                self._failed(exc, scope)
        elif b.try_probe():
            await asyncio.wait({self.probes.start(scope, b)}, timeout=self.deadline_s * 1.5)

    async def aclose(self) -> None:
        """Cancel the probes, the hold, the recovery work and the warm-up, wait for them at most
        :data:`CLOSE_TASKS_S` (a call that ignores its cancellation is left behind), then close
        the inner store (which bounds its own close)."""
        tasks = [t for t in (self._hold_task, self.warmup.task) if t is not None and not t.done()]
        tasks += self.probes.tasks()
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_TASKS_S)
            if pending:
                log.warning(
                    "prefix store: %d background call(s) did not end within %.1f s of their cancellation; left behind",
                    len(pending),
                    CLOSE_TASKS_S,
                )
        await self.inner.aclose()

    def _failed(self, exc: BaseException, scope: Scope = None) -> None:
        """A look-up, a ping or the warm-up failed: open ``scope``'s breaker (logged once per
        opening). A look-up cancelled because its client left never gets here."""
        name = type(exc).__name__
        b = self.scopes.breaker_for(scope)
        if b.failure(name):
            # a new opening (rare): the time to drop the scopes that left the map meanwhile
            self.scopes.forget_stale()
            where = "" if scope is None else f" on {scope_name(scope)}"
            log.warning(
                "prefix store failed%s (%s, deadline %.0f ms): skipping it, probing with a backoff from %.0f ms to %.0f s",
                where,
                name,
                self.deadline_s * 1000,
                b.backoff.first_s * 1000,
                b.backoff.max_s,
            )


def guarded(store: PrefixStore, deadline_s: float = DEFAULT_DEADLINE_S) -> PrefixStore:
    """``store`` behind a :class:`GuardedStore`, unless it never waits (memory) or already is."""
    if isinstance(store, (MemoryStore, GuardedStore)):
        return store
    return GuardedStore(store, deadline_s)
