"""The admin pages under ``/prefixgate/`` that read the money layer's ledger and metrics: :func:`routes`.

``dashboard`` (one self-contained HTML page), ``static/{name}``, ``kv``, ``api/summary``,
``api/fleet`` (Redis store only) and ``metrics`` (Prometheus text).

It does no access control (see :mod:`proxy.access`) and shows prompt text only when the
proxy logs bodies. See docs/dashboard.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import orjson
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from analyzer.pricing import PriceTable
from proxy.accounting.fleet_redis import RETENTION_S
from proxy.accounting.fleet_rows import Rows, capped, shape
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.reporting import kv_page
from proxy.reporting.summary import hit_rates, summarize
from proxy.reporting.time_range import parse_since

STATIC = Path(__file__).with_name("static")
STATIC_FILES = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
NO_STORE = {"cache-control": "no-store"}
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'"


def _json(data: object, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json", headers=NO_STORE)


def _bad(message: str) -> Response:
    return _json({"error": {"type": "bad_request", "message": message}}, 400)


def label_models(rows: list[dict], prices: PriceTable | None) -> None:
    """``priced_as`` on each model row whose price row carries a label (the demo's local model,
    "priced as gpt-4o-mini"): a borrowed rate is said where the money is shown."""
    if prices is None:
        return
    for row in rows:
        price = prices.lookup(row.get("model"))
        if price is not None and price.label:
            row["priced_as"] = price.label


def fleet_range(
    hours: dict[int, Rows],
    since: float | None,
    prices: PriceTable | None = None,
    now: float | None = None,
    max_models: int = 1000,
) -> dict:
    """The fleet's per-hour sums → the range's totals, models (every replica's names, capped
    again) and hourly series: every hour that ends after ``since`` up to now (all kept hours from
    the first with data when None), hours without requests as zeros."""
    now_hour = int((time.time() if now is None else now) // 3600)
    first = int(since // 3600) if since is not None else min(hours, default=now_hour)
    first = max(first, now_hour - RETENTION_S // 3600 + 1)
    last = max([now_hour, *hours])
    merged: Rows = {}
    points = []
    for h in range(first, last + 1):
        rows = hours.get(h, {})
        for key, row in rows.items():
            acc = merged.setdefault(key, [0] * len(row))
            merged[key] = [a + b for a, b in zip(acc, row)]
        point = hit_rates(shape(rows))
        points.append(
            {
                "t": h * 3600,
                "requests": point["requests"],
                "cost_usd": point["cost_usd"],
                "input_tokens": point["input_tokens"],
                "cached_tokens": point["cached_tokens"],
                "hit_rate": point["token_hit_rate"],
            }
        )
    out = hit_rates(shape(capped(merged, max_models)))
    for row in out["models"]:
        hit_rates(row)
    label_models(out["models"], prices)
    out["series"] = {"step": 3600, "points": points}
    return out


def routes(
    ledger: Ledger,
    metrics: Metrics,
    *,
    log_bodies: bool = False,
    prices: PriceTable | None = None,
    replicas: Callable[[], dict] | None = None,
) -> list[Route]:
    """``replicas``: the pools' live snapshot (:meth:`proxy.replicas.upstream_pools.Pools.snapshot`),
    whose health the per-upstream table shows beside each replica's totals from the ledger."""

    async def dashboard(request: Request) -> Response:
        return FileResponse(
            STATIC / "dashboard.html",
            media_type="text/html",
            headers={**NO_STORE, "content-security-policy": CSP},
        )

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return _json({"error": {"type": "not_found", "message": f"no static file {name!r}"}}, 404)
        return FileResponse(STATIC / name, media_type=STATIC_FILES[name], headers=NO_STORE)

    async def summary(request: Request) -> Response:
        q = request.query_params
        try:
            since = parse_since(q.get("since"))
            until = parse_since(q.get("until")) if q.get("until") else None
            buckets = int(q.get("buckets", "48"))
            top = int(q.get("top", "10"))
        except ValueError as exc:
            return _bad(str(exc))
        if not 1 <= buckets <= 1000 or not 1 <= top <= 100:
            return _bad("buckets must be 1..1000 and top 1..100")
        data = await ledger.read(
            lambda conn: summarize(conn, since=since, until=until, buckets=buckets, top=top)
        )
        label_models(data["models"], prices)
        data["bodies_logged"] = log_bodies
        data["fleet"] = metrics.fleet is not None
        data["ledger"] = {"written": ledger.written, "failures": ledger.failures, "dropped": ledger.dropped}
        if replicas is not None:
            data["pools"] = {
                name: {r["url"]: r["health"]["state"] for r in pool["replicas"]}
                for name, pool in replicas().items()
            }
        return _json(data)

    async def fleet(request: Request) -> Response:
        """The fleet over ``?since=`` (default 24h) from the range's hours only; ``all`` from the
        all-time hash (hours are kept 32 days). No numbers rather than zeros while Redis never
        answered."""
        fleet = metrics.fleet
        if fleet is None:
            return _json(
                {
                    "error": {
                        "type": "not_found",
                        "message": "no fleet totals: this proxy runs on the memory store "
                        "(one replica is the fleet); start replicas with --store redis://…",
                    }
                },
                404,
            )
        try:
            since = parse_since(request.query_params.get("since", "24h"))
        except ValueError as exc:
            return _bad(str(exc))
        hours, error, as_of = await fleet.hours(since)
        data = fleet_range(hours or {}, since, prices, max_models=fleet.max_models)
        if since is None:
            rows = await fleet.rows()
            series = data["series"]
            data = hit_rates(shape(capped(rows or {}, fleet.max_models)))
            for row in data["models"]:
                hit_rates(row)
            label_models(data["models"], prices)
            data["series"] = series
            error, as_of = fleet.error, fleet.as_of
        if as_of is None:
            data = {"models": [], "series": {"step": 3600, "points": []}}
        data.update(
            available=error is None,
            error=error,
            as_of=as_of,
            retention_days=RETENTION_S // 86400,
            flush=fleet.flush_state(),
        )
        return _json(data)

    async def metrics_endpoint(request: Request) -> Response:
        await metrics.refresh()
        return Response(metrics.render(), media_type=metrics.content_type, headers=NO_STORE)

    return [
        Route("/prefixgate/dashboard", dashboard, methods=["GET"]),
        Route("/prefixgate/kv", kv_page.page, methods=["GET"]),
        Route("/prefixgate/static/{name}", static, methods=["GET"]),
        Route("/prefixgate/api/summary", summary, methods=["GET"]),
        Route("/prefixgate/api/fleet", fleet, methods=["GET"]),
        Route("/prefixgate/metrics", metrics_endpoint, methods=["GET"]),
    ]
