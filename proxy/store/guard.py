"""A remote prefix store behind a deadline and a circuit breaker (:class:`GuardedStore`, :func:`guarded`).

Each look-up has its own deadline (``--store-timeout``); one that fails or misses it answers
None ("unknown") and opens the breaker of its scope (a Cluster node, else the whole store), which
probes in the background with a capped backoff. It also holds the store skipped until the shared
tenant secret is read, runs the recovery work when the store comes back, warms it up at start
and counts look-ups by outcome. A :class:`~proxy.store.MemoryStore` is never wrapped.

This module does not decide what the store holds, nor talk to Redis itself.
See docs/store.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence

from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker
from proxy.store.memory import MemoryStore

log = logging.getLogger("prefixgate.store")

DEFAULT_DEADLINE_S = 0.1
WARM_DEADLINE_S = 2.0  # the warm-up's own deadline (the slot map, a connection per node, the script)
FIRST_LOOKUP_S = (
    0.5  # how long a look-up waits for a warm-up in flight before it is skipped (unknown, no failure)
)
RECOVERY_DEADLINE_S = 5.0  # recovery work (a Redis round trip or two) inside a probe
CLOSE_TASKS_S = 0.2  # at close, how long cancelled probes / hold / recovery work get to end
MAX_SCOPES_SHOWN = 64
OK, UNAVAILABLE, SKIPPED = "ok", "unavailable", "skipped"

Scope = Hashable  # None: the whole store


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
        self.breaker = breaker if breaker is not None else Breaker(clock=clock)  # scope None: the whole store
        self.breakers: dict[Scope, Breaker] = {None: self.breaker}
        self._scope_of = inner.scope if inner.scoped else None
        self.held: str | None = None  # why the store is skipped whatever the breaker says (hold_until)
        self.lookups = {OK: 0, UNAVAILABLE: 0, SKIPPED: 0}
        self._probe_task: asyncio.Task | None = None  # the latest probe started in the background
        self._probes: dict[Scope, asyncio.Task] = {}
        self._hold_task: asyncio.Task | None = None
        self._recovery: list[Callable[[], Awaitable[object]]] = []
        self._recovery_task: asyncio.Task | None = None
        self.warm_deadline_s = max(deadline_s, WARM_DEADLINE_S)
        self.first_lookup_s = max(deadline_s, FIRST_LOOKUP_S)
        self._warm_task: asyncio.Task | None = None
        self._warm = inner.warm  # None: nothing to read ahead (PrefixStore.warm)
        inner.on_lost_data = self._lost_data

    @property
    def scoped(self) -> bool:
        return self._scope_of is not None

    def scope_of(self, tenant: str | None) -> Scope:
        """The scope a tenant's look-up falls in (None: the whole store)."""
        if self._scope_of is None or tenant is None:
            return None
        try:
            return self._scope_of(tenant)
        except Exception:  # a map being rebuilt: the whole store's breaker decides
            return None

    def breaker_for(self, scope: Scope) -> Breaker:
        b = self.breakers.get(scope)
        if b is None:
            b = self.breakers[scope] = self.breaker.sibling()
        return b

    def ready(self, tenant: str | None = None) -> bool:
        """True while the breaker of ``tenant``'s scope is closed, nothing holds the store and
        the tenant was hashed with the replicas' current shared secret (a
        :class:`proxy.tenant.Tenant` that is not ``recordable`` is skipped). Else False (the
        caller skips the store; counted), and a background probe of that scope starts when
        one is due (never awaited here). A scope that never failed gets no breaker."""
        scope = self.scope_of(tenant)
        b = self.breakers.get(scope)  # None: the scope never failed (closed)
        if (b is None or b.state == "closed") and self.held is None and getattr(tenant, "recordable", True):
            return True
        self.lookups[SKIPPED] += 1
        if b is not None and b.try_probe():
            self._start_probe(scope, b)
        return False

    def _start_probe(self, scope: Scope, b: Breaker) -> asyncio.Task:
        try:
            task = asyncio.get_running_loop().create_task(self._probe(scope, b))
        except BaseException:  # no loop: the probe granted never runs, so it must not stay "in flight"
            b.probe_done(False, "RuntimeError")
            raise
        self._probe_task = self._probes[scope] = task
        task.add_done_callback(
            lambda t: self._probes.pop(scope, None) if self._probes.get(scope) is t else None
        )
        return task

    def warm_up(self) -> asyncio.Task | None:
        """Start reading, in the background, what the first look-ups would otherwise all wait
        for (the inner store's ``warm()``: a Cluster's slot map, a connection to each node, the
        script), under its own deadline (:data:`WARM_DEADLINE_S`). Never awaited by start; a
        failure counts once, against the whole store. Called at the app's start, else by the
        first look-up; later calls return the same task (None: nothing to warm, or no loop)."""
        if self._warm is None or self._warm_task is not None:
            return self._warm_task
        try:
            self._warm_task = asyncio.get_running_loop().create_task(self._warm_inner())
        except RuntimeError:  # no running loop: the first look-up starts it
            return None
        return self._warm_task

    async def _warm_inner(self) -> None:
        assert self._warm is not None
        try:
            async with asyncio.timeout(self.warm_deadline_s):
                await self._warm()
        except Exception as exc:
            if (
                self._known_scopes() and self._scope_of is not None
            ):  # the map is in: a node's own look-ups decide
                log.warning("prefix store: warm-up did not finish (%s); look-ups go on", type(exc).__name__)
            else:
                self._failed(exc, None)  # the whole store, once (not one failure per waiting look-up)

    @property
    def warming(self) -> bool:
        return self._warm_task is not None and not self._warm_task.done()

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None:
        """The inner store's answer, or ``None`` when skipped, failed or past the deadline.
        While the warm-up runs, a look-up first waits for it (up to :attr:`first_lookup_s`;
        past that it is skipped, which is not the store's failure)."""
        if not self.ready(tenant):
            return None
        warm = self._warm_task if self._warm_task is not None else self.warm_up()
        if warm is not None and not warm.done():
            await asyncio.wait({warm}, timeout=self.first_lookup_s)  # never cancels the warm-up
            if not warm.done():
                self.lookups[SKIPPED] += 1
                return None
            if not self.ready(tenant):  # the warm-up failed: the breaker is open
                return None
        try:
            async with asyncio.timeout(self.deadline_s):
                found = await self.inner.seen(tenant, provider, hashes)
        except Exception as exc:  # CancelledError (the client left) is not the store's fault
            self.lookups[UNAVAILABLE] += 1
            self._failed(exc, self.scope_of(tenant))
            return None
        self.lookups[OK] += 1
        return found

    def on_recovery(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work()`` whenever the store comes back (module docstring); it must bound itself."""
        self._recovery.append(work)

    def hold_until(self, work: Callable[[], Awaitable[object]], cause: str) -> None:
        """Skip the store (``ready()`` False, health not ok with ``cause``) until ``work()``,
        run now as a background task, ends; :meth:`aclose` cancels it. Needs a running loop."""
        self.held = cause

        async def run() -> None:
            try:
                await work()
            except Exception:  # never released on a failure: the store would be used before it may be
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
        self._forget_stale()
        scopes = set(self.breakers)
        if self._scope_of is not None:
            known = self._known_scopes()
            if known:
                scopes |= known
                if self.breaker.allow():
                    scopes.discard(None)  # the whole-cluster scope: only look-ups without a tenant use it
        await asyncio.gather(*(self._check(scope) for scope in scopes))
        opened = {s: b for s, b in self.breakers.items() if not b.allow()}
        shown = max(opened.values(), key=lambda b: b.opened_at or 0.0) if opened else self.breaker
        ok = not opened and self.held is None
        cause = None
        if not ok:
            cause = self.held or shown.last_error
            if self.held is None and self._scope_of is not None:
                names = ", ".join(sorted(map(_name, opened))[:8])
                cause = f"{shown.last_error} ({len(opened)} of {len(scopes | set(opened))} store scopes skipped: {names})"
        states = sorted(
            (
                (_name(s), self.breakers[s].state if s in self.breakers else "closed")
                for s in scopes | set(opened)
            ),
            key=lambda item: (item[1] == "closed", item[0]),
        )
        return {
            "ok": ok,
            "cause": cause,
            "held": self.held,
            "warming": self.warming,
            "deadline_ms": round(self.deadline_s * 1000, 3),
            **shown.to_json(),
            "lookups": dict(self.lookups),
            "scopes": {
                "total": len(scopes | set(opened)),
                "open": len(opened),
                "states": dict(states[:MAX_SCOPES_SHOWN]),
            },
        }

    async def aclose(self) -> None:
        """Cancel the probes, the hold and the recovery work, wait for them at most
        :data:`CLOSE_TASKS_S` (a call that ignores its cancellation is left behind), then close
        the inner store (which bounds its own close)."""
        tasks = [
            t
            for t in (*self._probes.values(), self._hold_task, self._recovery_task, self._warm_task)
            if t is not None and not t.done()
        ]
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
        name = type(exc).__name__
        if self.breaker_for(scope).failure(name):
            b = self.breakers[scope]
            self._forget_stale()  # a new opening (rare): drop the scopes that left the map meanwhile
            where = "" if scope is None else f" on {_name(scope)}"
            log.warning(
                "prefix store failed%s (%s, deadline %.0f ms): skipping it, probing with a backoff from %.0f ms to %.0f s",
                where,
                name,
                self.deadline_s * 1000,
                b.backoff.first_s * 1000,
                b.backoff.max_s,
            )

    def _known_scopes(self) -> set[Scope]:
        try:
            return set(self.inner.scopes())
        except Exception:
            return set()

    def _forget_stale(self) -> None:
        """Drop the breakers of scopes the store no longer maps (a slot served again, a node gone)."""
        for scope in [s for s in self.breakers if s is not None]:
            b = self.breakers[scope]
            if not b.probing and self.inner.stale(scope):
                del self.breakers[scope]

    async def _check(self, scope: Scope) -> None:
        b = self.breaker_for(scope)
        if b.allow():
            try:
                await self._ping(scope)
            except Exception as exc:
                self._failed(exc, scope)
        elif (
            b.try_probe()
        ):  # in the background (its recovery work may take seconds), awaited at most ~the deadline
            await asyncio.wait({self._start_probe(scope, b)}, timeout=self.deadline_s * 1.5)

    async def _ping(self, scope: Scope = None) -> None:
        ping = self.inner.ping  # a store with nothing cheaper to ask answers True (proxy.store.base)
        async with asyncio.timeout(self.deadline_s):
            if not await (ping(scope) if self._scope_of is not None else ping()):
                raise ConnectionError("ping answered false")

    async def _probe(self, scope: Scope = None, b: Breaker | None = None) -> None:
        """One probe granted by :meth:`Breaker.try_probe`: a ``PING``, then the recovery work;
        closes the breaker when both succeed."""
        b = b if b is not None else self.breaker
        ok, error = False, None
        try:
            await self._ping(scope)
            if self._recovery and self._recovers(scope):
                async with asyncio.timeout(RECOVERY_DEADLINE_S):
                    await self._recover()
            ok = True
        except Exception as exc:
            error = type(exc).__name__
        finally:  # also when cancelled: the next probe must stay possible
            if b.probe_done(ok, error):
                log.info(
                    "prefix store answers again%s: using it", "" if scope is None else f" on {_name(scope)}"
                )
                if scope is not None and self.breakers.get(scope) is b:
                    del self.breakers[
                        scope
                    ]  # closed: a scope that does not fail needs no breaker (bounded map)

    def _recovers(self, scope: Scope) -> bool:
        """Whether ``scope``'s return needs the recovery work (the inner store's ``recovers``:
        on a Cluster, only the node holding the shared secret's key; else every scope)."""
        return bool(self.inner.recovers(scope))  # raising inside a probe: that probe failed

    async def _recover(self) -> None:
        for work in self._recovery:
            await work()

    def _lost_data(self) -> None:
        """The inner store saw Redis lose its data (restart without persistence): run the
        recovery work in the background, once at a time."""
        if not self._recovery or (self._recovery_task is not None and not self._recovery_task.done()):
            return

        async def run() -> None:
            try:
                async with asyncio.timeout(RECOVERY_DEADLINE_S):
                    await self._recover()
            except Exception as exc:
                log.warning(
                    "prefix store: recovery work after Redis lost its data failed (%s)", type(exc).__name__
                )

        self._recovery_task = asyncio.get_running_loop().create_task(run())


def _name(scope: Scope) -> str:
    return "store" if scope is None else str(scope)


def guarded(store: PrefixStore, deadline_s: float = DEFAULT_DEADLINE_S) -> PrefixStore:
    """``store`` behind a :class:`GuardedStore`, unless it never waits (memory) or already is."""
    if isinstance(store, (MemoryStore, GuardedStore)):
        return store
    return GuardedStore(store, deadline_s)
