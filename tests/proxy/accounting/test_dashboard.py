"""The dashboard in headless Chromium against a real server and a real ledger."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from starlette.applications import Starlette

from proxy.access import AdminAccess
from proxy.accounting.dashboard import routes
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.accounting.stats import Stats
from tests.support.browser import Elements, dump_dom, screenshot
from tests.support.servers import serve
from tests.proxy.accounting.test_summary import records


@pytest.fixture
def dashboard_app(tmp_path):
    ledger_box: dict = {}
    recs = records()
    for i, r in enumerate(recs):  # move the records into the last hour
        r.ts = time.time() - 3000 + i * 100
    stats = Stats()

    async def fill():
        ledger = Ledger(str(tmp_path / "ledger.sqlite"))
        for r in recs:
            r.chain = ["aa" * 8, "bb" * 8] if r.prefix_segments else ["cc" * 8]
            ledger.handle(r)
            stats.handle(r)
        await ledger.flush()
        ledger_box["ledger"] = ledger

    asyncio.run(fill())
    app = Starlette(routes=routes(ledger_box["ledger"], Metrics()))
    yield AdminAccess(app, "adm1n"), stats
    ledger_box["ledger"].close_sync()


def test_page_renders_with_data_equal_to_stats(dashboard_app, chromium_path, tmp_path):
    app, stats = dashboard_app
    with serve(app) as url:
        assert httpx.get(f"{url}/prefixgate/dashboard").status_code == 401
        page = f"{url}/prefixgate/dashboard?token=adm1n&since=24h"
        dom = Elements(dump_dom(chromium_path, page))
        screenshot(chromium_path, page, str(tmp_path / "dashboard.png"))
    assert dom.find("body")[0]["data-state"] == "ready"
    want = stats.to_json()
    assert float(dom.by_id["card-spent"]["data-value"]) == pytest.approx(want["cost_usd"], abs=1e-9)
    assert float(dom.by_id["card-saved"]["data-value"]) == pytest.approx(want["saved_usd"], abs=1e-9)
    assert float(dom.by_id["card-missed"]["data-value"]) == pytest.approx(want["missed_usd"], abs=1e-9)
    assert float(dom.by_id["card-hit"]["data-value"]) == pytest.approx(want["cached_tokens"] / want["input_tokens"])
    assert dom.text["card-spent"] == "$0.0112"  # $0.0111808 shown to 4 places
    assert len(dom.find("rect", **{"class": "bar"})) > 0  # cost chart has bars
    assert len(dom.find("circle", **{"class": "hit-point"})) > 0  # hit-rate chart has points
    assert [r["data-fingerprint"] for r in dom.find("tr") if "data-fingerprint" in r] == ["aa" * 8]
    assert [r["data-reason"] for r in dom.find("div", **{"class": "reason"})] == ["volatile-time"]
    models = {r["data-model"] for r in dom.find("tr") if "data-model" in r}
    assert models == {m["model"] or "" for m in want["models"]}
    rewrites = {r["data-rewrite"]: int(r["data-count"]) for r in dom.find("tr") if "data-rewrite" in r}
    assert rewrites == want["rewrites"] == {"add-breakpoints": 3, "cap-breakpoints": 1}
    assert dom.text["rewrites-sub"] == "3 of 14 requests rewritten" and "rewrites-none" not in dom.by_id
    assert (tmp_path / "dashboard.png").stat().st_size > 10_000


def test_summary_api_rejects_bad_ranges(dashboard_app):
    app, _ = dashboard_app
    with serve(app) as url:
        h = {"Authorization": "Bearer adm1n"}
        assert httpx.get(f"{url}/prefixgate/api/summary?since=soon", headers=h).status_code == 400
        assert httpx.get(f"{url}/prefixgate/api/summary?buckets=0", headers=h).status_code == 400
        assert httpx.get(f"{url}/prefixgate/static/../ledger.py", headers=h).status_code == 404
        ok = httpx.get(f"{url}/prefixgate/api/summary?since=all", headers=h).json()
        assert ok["requests"] == 14 and ok["ledger"]["written"] == 14
