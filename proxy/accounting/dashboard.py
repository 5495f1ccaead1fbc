"""The admin pages the money layer adds under ``/prefixgate/``.

- ``GET /prefixgate/dashboard`` — one HTML page (``proxy/accounting/static/``): no CDN, nothing from
  the internet; plain JS draws SVG charts from the JSON API below.
- ``GET /prefixgate/static/{name}`` — that page's own CSS and JS (a fixed list of files).
- ``GET /prefixgate/kv`` — the KV-cache calculator (:mod:`proxy.accounting.kv_page`), linked
  from the dashboard.
- ``GET /prefixgate/api/summary?since=24h&until=…&buckets=48`` — the ledger's summary of a
  time range (:func:`proxy.accounting.summary.summarize`); its totals use the same definitions as
  ``/prefixgate/stats``, so for the same requests the numbers are equal. A model priced at a
  borrowed rate carries its price row's label (``priced_as``).
- ``GET /prefixgate/metrics`` — Prometheus text from the app's own registry.

Access control is not here (see :mod:`proxy.access`). Repeated prefixes show a fingerprint;
text previews only when the proxy logs bodies.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from analyzer.pricing import PriceTable
from proxy.accounting import kv_page
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.accounting.summary import parse_since, summarize

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


def routes(ledger: Ledger, metrics: Metrics, *, log_bodies: bool = False, prices: PriceTable | None = None) -> list[Route]:
    async def dashboard(request: Request) -> Response:
        return FileResponse(STATIC / "dashboard.html", media_type="text/html",
                            headers={**NO_STORE, "content-security-policy": CSP})

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
        data = await ledger.read(lambda conn: summarize(conn, since=since, until=until, buckets=buckets, top=top))
        label_models(data["models"], prices)
        data["bodies_logged"] = log_bodies
        data["ledger"] = {"written": ledger.written, "failures": ledger.failures, "dropped": ledger.dropped}
        return _json(data)

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.render(), media_type=metrics.content_type, headers=NO_STORE)

    return [
        Route("/prefixgate/dashboard", dashboard, methods=["GET"]),
        Route("/prefixgate/kv", kv_page.page, methods=["GET"]),
        Route("/prefixgate/static/{name}", static, methods=["GET"]),
        Route("/prefixgate/api/summary", summary, methods=["GET"]),
        Route("/prefixgate/metrics", metrics_endpoint, methods=["GET"]),
    ]
