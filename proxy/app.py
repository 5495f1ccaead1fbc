"""The proxy as a Starlette app: ``create_app(config) -> Starlette``.

Routes: every path outside ``/prefixgate/`` is proxied (:mod:`proxy.handler`); ``/prefixgate/``
serves ``stats``, ``health`` (``ok``, or 503 ``degraded`` with the pool, store, ledger and rules
drift), and the money layer's metrics, dashboard, summary and static pages, behind the admin
token when set (:mod:`proxy.access`). Everything is built eagerly into one
:class:`~proxy.gate.Gate` (``app.state.gate``, the only state, so callers can add sinks before
start); the lifespan opens the upstream pool and closes auto-cache, pool, store and sinks.
It does not parse bodies or relay responses.
See docs/dashboard.md (stats, health), docs/request-path.md and docs/shutdown.md.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import asynccontextmanager

import httpx
import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from proxy.access import AdminAccess
from proxy.accounting.fleet import open_fleet
from proxy.accounting.money_layer import MoneyLayer
from proxy.accounting.recorder import Recorder
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.config import ProxyConfig
from proxy.gate import Gate
from proxy.gemini_cache.hook import auto_cache_for
from proxy.handler import handle
from proxy.replicas.upstream_pools import Pools
from proxy.reporting import dashboard
from proxy.server.aborts import install_log_filter
from proxy.store import PrefixStore, open_store
from proxy.store.guard import guarded
from proxy.tenant import TenantHasher
from proxy.upstream_urls import Router

log = logging.getLogger("prefixgate.access")
#: Rules-drift rows /prefixgate/health names (the most frequent; all are in /prefixgate/stats).
MAX_HEALTH_DRIFT = 10
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def _printable(text: str | None) -> str | None:
    """``text`` with control characters escaped: a model name is the client's string, and a
    newline in it must not forge a second log line."""
    return text if text is None or text.isprintable() else text.encode("unicode_escape").decode("ascii")


class AccessLogSink:
    """One INFO line per request: id, provider (and the upstream's name when it is not the
    provider's, and a pool's replica), route, model, status, timing, prefix. Never the query string (Gemini's
    ``?key=``), headers or body (they can hold keys)."""

    def handle(self, r: RequestRecord) -> None:
        if log.isEnabledFor(logging.INFO):
            log.info(
                "%s %s %s %s model=%s status=%d %.1fms prefix=%s/%d%s%s%s",
                r.request_id,
                r.provider,
                r.method,
                r.route,
                _printable(r.model),
                r.status,
                r.latency_s * 1000,
                "unknown" if r.prefix_segments is None else r.prefix_segments,
                r.total_segments,
                f" upstream={r.upstream}" if r.upstream and r.upstream != r.provider else "",
                f" replica={r.replica}" if r.replica else "",
                f" error={r.error}" if r.error else "",
            )

    async def aclose(self) -> None:
        return None


def _json(data: object, status: int = 200) -> Response:
    """``data`` as JSON; an int beyond 64 bits, which orjson refuses, never 500s an endpoint."""
    try:
        content = orjson.dumps(data)
    except TypeError:
        content = json.dumps(data, default=str).encode()
    return Response(content, status_code=status, media_type="application/json")


async def stats_endpoint(request: Request) -> Response:
    """``/prefixgate/stats`` (the admin token is :class:`~proxy.access.AdminAccess`'s job)."""
    return _json(await request.app.state.gate.stats_json())


async def health_endpoint(request: Request) -> Response:
    """``/prefixgate/health``: rules drift (a warning naming what to update, never a failure), the
    upstream pool (size and whence, in use, idle, waiting, exhausted since start), the ledger,
    and a guarded (Redis) store's breaker, bounded by its deadline (none for memory); 503 when
    the ledger or the store is not ok."""
    gate: Gate = request.app.state.gate
    body = {
        "status": "ok",
        "store": "memory" if gate.config.store == "memory" else "redis",
        "uptime_s": round(time.monotonic() - gate.started, 3),
    }
    drift = gate.stats.drift.rows()
    if drift:
        body["rules_drift"] = drift[:MAX_HEALTH_DRIFT]
        body["warnings"] = [row["warning"] for row in drift[:MAX_HEALTH_DRIFT]]
        if len(drift) > MAX_HEALTH_DRIFT:
            body["warnings"].append(
                f"{len(drift) - MAX_HEALTH_DRIFT} more rules-drift rows in /prefixgate/stats"
            )
    if gate.pool is not None:
        body["pool"] = gate.pool.pool_stats()
    if gate.replicas:
        # engines out of rotation are the pool's business (a 502 no_healthy_replica), not the proxy's health
        body["replicas"] = {
            name: {
                "in_rotation": sum(r.health.in_rotation for r in rs.replicas),
                "replicas": len(rs.replicas),
            }
            for name, rs in gate.replicas.sets.items()
        }
    ledger = gate.money.ledger.health() if gate.money is not None else None
    if ledger is not None:
        body["ledger"] = ledger
        if not ledger["ok"]:
            body["status"] = "degraded"
    breaker = await gate.store.health()
    if breaker is not None:
        body["breaker"] = breaker
        if not breaker["ok"]:
            body.update(status="degraded", store_error=breaker.get("cause") or breaker["last_error"])
            return _json(body, 503)
    return _json(body, 200 if body["status"] == "ok" else 503)


async def handle_other(request: Request) -> Response:
    """Every path no route above took: proxied (the router decides), except the proxy's own
    ``/prefixgate/`` namespace in any spelling, which stays a plain 404 and is never recorded."""
    if request.scope["path"].lower().startswith("/prefixgate"):
        return Response("Not Found", status_code=404, media_type="text/plain")
    return await handle(request)


def create_app(
    config: ProxyConfig,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    store: PrefixStore | None = None,
) -> Starlette:
    """The proxy app. ``transport`` replaces the network (unit tests pass an
    ``httpx.MockTransport``); ``store`` replaces the one ``config.store`` names. A bad price
    file or ledger raises here, before serving. On a Redis store the fleet's totals (every
    replica's) live there too, and the tenant secret is the one every replica shares."""
    stats = Stats()
    money = MoneyLayer.build(config)
    fleet = open_fleet(config.store)
    if fleet is not None:
        money.metrics.attach_fleet(fleet)
    gate = Gate(
        config=config,
        router=Router.for_config(config),
        tenants=TenantHasher.for_config(config),
        store=guarded(store if store is not None else open_store(config), config.store_timeout),
        recorder=Recorder(
            [stats, AccessLogSink(), *money.sinks, *([fleet] if fleet else [])], money.enrichers
        ),
        stats=stats,
        money=money,
        fleet=fleet,
        replicas=Pools(config.upstreams, config.store),
        gemini_auto_cache=auto_cache_for(config, money.prices),
    )

    money.metrics.attach_pool(lambda: gate.pool.pool_stats() if gate.pool is not None else None)
    if gate.replicas:
        money.metrics.attach_replicas(gate.replicas.snapshot)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        # uvicorn logs no traceback for a response the relay aborted (and logged); a Redis (Cluster)
        # store reads its slot map now, in the background: never awaited here
        install_log_filter()
        gate.start(transport)
        gate.store.warm_up()
        if gate.tenants.shared_store:
            # Redis came back (maybe empty): write the shared secret back before the store is used again
            gate.store.on_recovery(gate.tenants.reassert_shared)
        if gate.tenants.pending_store:
            # Redis did not answer at start: fetch the replicas' shared tenant secret in the background,
            # skipping the store until then (never a prefix recorded under a replica-local tenant)
            gate.store.hold_until(
                gate.tenants.fetch_shared,
                "the shared tenant secret is not read yet: Redis did not answer at start",
            )
        try:
            yield
        finally:
            from proxy.server.closing import close_gate

            # pool, store, sinks within a budget; the ledger always closes
            await close_gate(gate)

    # /v1/ first, so the hot path matches at once; the catch-all last: /v1beta/, /NAME/…, and the
    # 404 naming the prefixes
    routes = [
        Route("/v1/{path:path}", handle, methods=ALL_METHODS),
        Route("/prefixgate/stats", stats_endpoint, methods=["GET"]),
        Route("/prefixgate/health", health_endpoint, methods=["GET"]),
        *dashboard.routes(
            money.ledger,
            money.metrics,
            log_bodies=money.log_bodies,
            prices=money.prices,
            replicas=gate.replicas.snapshot if gate.replicas else None,
        ),
        Route("/{path:path}", handle_other, methods=ALL_METHODS),
    ]
    middleware = [Middleware(AdminAccess, token=config.admin_token)]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.gate = gate
    return app
