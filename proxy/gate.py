"""Everything the request path shares, in one object: :class:`Gate`.

One per app (``app.state.gate``): the config, router, tenant hasher, guarded store, recorder
with its sinks and enrichers, stats, fleet totals, money layer, head-returns tracker, the pools of
replicas (``replicas``) and, once started, the upstream pool (``pool``). :meth:`Gate.start` opens
the pool and the pools' health checks; :meth:`Gate.aclose` closes auto-cache, replica pools,
pool, store and sinks, each even if the one before failed.
:meth:`Gate.stats_json` is ``/prefixgate/stats``; :meth:`Gate.finish` hands a done exchange to
the recorder. It does not build the parts (:func:`proxy.app.create_app` does) and holds no
per-request state. See docs/architecture.md (``proxy/``) and docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx

from proxy.accounting.fleet import Fleet
from proxy.accounting.money_layer import MoneyLayer
from proxy.accounting.recorder import Recorder
from proxy.accounting.stats import Stats
from proxy.config import ProxyConfig
from proxy.gemini_cache.hook import AutoCacheHook
from proxy.head_returns import HeadReturnsTracker
from proxy.provider_diagnostics import ProviderDiagnostics
from proxy.replicas.upstream_pools import Pools
from proxy.store import PrefixStore
from proxy.tenant import TenantHasher
from proxy.transport.upstream import UpstreamPool
from proxy.upstream_urls import Router

if TYPE_CHECKING:
    from proxy.exchange import Exchange


@dataclass
class Gate:
    """``fleet``: every replica's totals in Redis (None on the memory store); ``head_returns``:
    heads over time, for the ttl-1h / ttl-12h rewrites; ``gemini_auto_cache``: off unless
    ``--gemini-auto-cache`` (then an enricher too: it sees each finished exchange and drops
    refused caches); ``started``: for ``/prefixgate/health``'s uptime; ``provider_diagnostics``:
    the tenants' recent Anthropic response ids, to ask the provider why a request missed."""

    config: ProxyConfig
    router: Router
    tenants: TenantHasher
    store: PrefixStore
    recorder: Recorder
    stats: Stats
    money: MoneyLayer | None = None
    fleet: Fleet | None = None
    pool: UpstreamPool | None = None
    replicas: Pools = field(default_factory=Pools)
    head_returns: HeadReturnsTracker = field(default_factory=HeadReturnsTracker)
    gemini_auto_cache: AutoCacheHook = field(default_factory=AutoCacheHook)
    started: float = field(default_factory=time.monotonic)
    provider_diagnostics: ProviderDiagnostics = field(default_factory=ProviderDiagnostics)

    def __post_init__(self) -> None:
        self.recorder.enrichers.append(self.provider_diagnostics)
        if self.gemini_auto_cache.on:
            self.recorder.enrichers.append(self.gemini_auto_cache)

    def start(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """Opens the pool, which the auto-cache's background calls share (each recorded on its own)."""
        self.pool = UpstreamPool(self.config, transport)
        self.replicas.start(self.pool)
        self.gemini_auto_cache.start(self.pool, self.recorder.emit)
        self.started = time.monotonic()
        if self.fleet is not None:
            self.fleet.start()

    async def stats_json(self) -> dict:
        """The stats, and the fleet's view (bounded by its deadline, cached 1 s; never raises)."""
        out = self.stats.to_json()
        if self.replicas:
            out["replicas"] = self.replicas.snapshot()
        if self.fleet is not None:
            out["fleet"] = await self.fleet.view()
        return out

    def finish(self, exchange: Exchange) -> None:
        self.recorder.record(exchange)

    async def aclose(self) -> None:
        """Closes the parts in order; each before the recorder gets at most its budget
        (:data:`CLOSE_BUDGET_S`), so a part that hangs never keeps the books open: the
        recorder (the ledger's last rows) always closes. The auto-cache's calls end before the
        pool closes; the first part that failed to close raises after the books are closed."""
        errors = []
        if self.gemini_auto_cache.on:
            errors.append(await _bounded("gemini auto-cache", self.gemini_auto_cache.aclose()))
        errors.append(await _bounded("replica pools", self.replicas.aclose()))
        if self.pool is not None:
            errors.append(await _bounded("upstream pool", self.pool.aclose()))
        errors.append(await _bounded("prefix store", self.store.aclose()))
        await self.recorder.aclose()
        failed = next((exc for exc in errors if exc is not None), None)
        if failed is not None:
            raise failed


#: Per part closed before the recorder at shutdown (the auto-cache waits up to 5 s of it).
CLOSE_BUDGET_S = 8.0
log = logging.getLogger("prefixgate.shutdown")


async def _bounded(part: str, closing) -> Exception | None:
    """Awaits ``closing`` for at most :data:`CLOSE_BUDGET_S`; past it logs a warning naming
    the part and where it was stuck, and goes on. Returns the error it raised, if any (one part
    failing to close must not keep the others open)."""
    task = asyncio.ensure_future(closing)
    try:
        await asyncio.wait_for(asyncio.shield(task), CLOSE_BUDGET_S)
    except TimeoutError:
        stack = "".join(
            f"\n  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}"
            for frame in task.get_stack()
        )
        log.warning(
            "shutdown: closing the %s took over %.0f s; going on without it (stuck in:%s)",
            part,
            CLOSE_BUDGET_S,
            stack or " ?",
        )
        task.cancel()
    except Exception as exc:
        return exc
    return None
