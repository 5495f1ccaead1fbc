"""The dashboard in headless Chromium against a real server and a real ledger."""

from __future__ import annotations

import asyncio
import os
import time

import httpx
import pytest
from starlette.applications import Starlette

from proxy.access import AdminAccess
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.accounting.stats import Stats
from proxy.reporting.dashboard import routes
from tests.support.browser import Elements, dump_dom, screenshot
from tests.support.request_records import records
from tests.support.servers import serve


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
    assert float(dom.by_id["card-hit"]["data-value"]) == pytest.approx(
        want["cached_tokens"] / want["input_tokens"]
    )
    assert dom.text["card-spent"] == "$0.01"  # $0.0111808: cents from a cent up
    assert dom.text["card-saved"] == "$0.0008192"  # 4 significant digits below a cent
    assert len(dom.find("rect", **{"class": "bar"})) > 0  # cost chart has bars
    assert len(dom.find("circle", **{"class": "hit-point"})) > 0  # hit-rate chart has points
    assert [r["data-fingerprint"] for r in dom.find("tr") if "data-fingerprint" in r] == ["aa" * 8]
    assert [r["data-reason"] for r in dom.find("div", **{"class": "reason"})] == ["volatile-time"]
    models = {r["data-model"] for r in dom.find("tr") if "data-model" in r}
    assert (
        models == {m["model"] or "" for m in want["models"]} == {"gpt-4o-mini", "private"}
    )  # the 502 billed nothing
    assert [r["data-route"] for r in dom.find("tr") if "data-route" in r] == ["/v1/chat/completions"]
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


MONEY = [
    0,
    0.0,
    -0.0,
    1e-12,
    0.000012345,
    0.0001536,
    0.0005,
    0.007138,
    0.0099994,
    0.0099996,
    0.01,
    0.0371,
    0.125,
    0.375,
    1.005,
    2.675,
    1234.5678,
    98765432.1,
    -0.0075,
    -0.0371,
    -12345678.9,
    1 / 3,
    2 / 3 * 1e-3,
    0.5e-2,
    4.4999e-3,
]


@pytest.fixture
def busy_app(tmp_path):
    """The records of the summary tests, plus what a first run of the demo shows: model lists,
    a probe, a long model name, a large amount, and the demo's model priced at a borrowed rate."""
    from analyzer.pricing import Price, PriceTable
    from analyzer.usage import Usage
    from proxy.accounting.records import RequestRecord

    now = time.time()
    recs = records()
    for i, r in enumerate(recs):
        r.ts = now - 60 + i * 3
    long_name = "ft:gpt-4o-mini-2024-07-18:acme-corporation-support-assistant:billing-v7:Ab12Cd34"
    recs += [
        RequestRecord(f"g{i}", now - 30 + i, "t", "openai", "/v1/models", method="GET", status=200)
        for i in range(4)
    ]
    recs += [
        RequestRecord("probe", now - 20, "t", "openai", "/v1/chat/completions", model="m", status=404),
        RequestRecord(
            "big",
            now - 10,
            "t",
            "anthropic",
            "/v1/messages",
            model=long_name,
            status=200,
            analysed=True,
            usage=Usage(900_000_000, 800_000_000, 50_000_000, 0, 9_000_000),
            cost_usd=98765432.1,
            saved_usd=-12345678.9,
            missed_usd=1234567.89,
            miss_reason="volatile-request-id; path=system[0]",
        ),
        RequestRecord(
            "demo",
            now - 5,
            "t",
            "openai",
            "/v1/chat/completions",
            model="prefixgate-demo-random-v2",
            status=200,
            analysed=True,
            usage=Usage(3000, 2048, 0, 0, 40),
            cost_usd=0.0002316,
            saved_usd=0.0001536,
            missed_usd=0.0,
        ),
    ]
    prices = PriceTable.load()
    mini = prices.lookup("gpt-4o-mini")
    prices.add(
        Price(
            "prefixgate-demo-random-v2",
            "openai",
            mini.input,
            mini.output,
            mini.cache_read,
            label="priced as gpt-4o-mini",
        )
    )
    box: dict = {}

    async def fill():
        ledger = Ledger(str(tmp_path / "ledger.sqlite"))
        for r in recs:
            r.chain = ["aa" * 8, "bb" * 8] if r.prefix_segments else ["cc" * 8]
            ledger.handle(r)
        await ledger.flush()
        box["ledger"] = ledger

    asyncio.run(fill())
    yield Starlette(routes=routes(box["ledger"], Metrics(), prices=prices))
    box["ledger"].close_sync()


def test_the_page_fits_a_phone_and_a_desktop_and_formats_money_like_python(busy_app, chromium_path, tmp_path):
    from analyzer.cost import format_usd
    from tests.support.cdp import LAYOUT_JS, Browser, png_size

    shots = {}
    with serve(busy_app) as url, Browser(chromium_path) as browser:
        for width in (1400, 420):
            browser.open(f"{url}/prefixgate/dashboard?since=24h", width)
            assert (
                browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
                == "ready"
            )
            layout = browser.evaluate(LAYOUT_JS)
            # No element wider than the viewport: the page never scrolls sideways; wide tables
            # scroll inside their card.
            assert layout["scroll_width"] <= layout["viewport"] and layout["wide"] == [], (width, layout)
            assert layout["viewport"] <= width
            shots[width] = str(tmp_path / f"dashboard-{width}.png")
            browser.screenshot(shots[width])
            texts = browser.evaluate("""[...document.querySelectorAll('#card-spent, #card-saved, #card-missed, #models td.n')]
                .filter((n) => n.dataset.value !== undefined).map((n) => [n.dataset.value, n.textContent, n.cellIndex ?? -1])""")
            for value, text, col in texts:
                if col in (-1, 6, 7, 8):  # the cards, then spent, saved and missed
                    assert text == format_usd(float(value) if value else None), (value, text)
            assert browser.evaluate(
                "[...document.querySelectorAll('[data-priced-as]')].map((n) => n.textContent)"
            ) == ["priced as gpt-4o-mini"]
            assert browser.evaluate(
                "[...document.querySelectorAll('#not-billable tr[data-route]')].map((n) => [n.dataset.method, n.dataset.route, n.dataset.count])"
            ) == [["GET", "/v1/models", "4"], ["POST", "/v1/chat/completions", "2"]]
            assert browser.evaluate("document.getElementById('kv-link').getAttribute('href')") == "kv"
            assert browser.evaluate("document.getElementById('scope').hidden") is True  # no fleet: no switch
            # the chart spans the minute of traffic, not the day: many buckets have requests
            assert browser.evaluate("document.querySelectorAll('#chart-hit .hit-point').length") >= 10
        assert browser.evaluate(f"{MONEY!r}.map(usd)") == [
            format_usd(v) for v in MONEY
        ]  # the JS twin of format_usd
    assert png_size(shots[1400]) == (1400, 900) and png_size(shots[420]) == (420, 900)
    sizes = {w: os.path.getsize(p) for w, p in shots.items()}
    assert all(size > 20_000 for size in sizes.values()), sizes  # drawn pages, not blank ones


def test_the_per_upstream_table_shows_when_more_than_one_upstream_has_traffic(dashboard_app, chromium_path):
    app, stats = dashboard_app
    with serve(app) as url:
        dom = Elements(dump_dom(chromium_path, f"{url}/prefixgate/dashboard?token=adm1n&since=24h"))
    assert dom.find("body")[0]["data-state"] == "ready"
    want = stats.to_json()["upstreams"]  # records without an upstream count under their provider's name
    rows = {r["data-upstream"]: r for r in dom.find("tr") if "data-upstream" in r}
    assert set(rows) == set(want) == {"openai", "anthropic"}
    assert "hidden" not in dom.by_id["per-upstream"]


def test_the_page_shows_rules_drift_and_the_providers_miss_reasons(tmp_path, chromium_path):
    from analyzer.cost import Breakdown, format_usd
    from analyzer.usage import Usage
    from proxy.accounting.records import RequestRecord

    now = time.time()
    recs = [
        RequestRecord(
            "d1",
            now - 50,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-5.5",
            status=200,
            analysed=True,
            usage=Usage(3000, 0, 2000, 0, 5),
            drift=["cache_write_tokens:not_billed_by_price_row"],
        ),
        RequestRecord(
            "d2",
            now - 40,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-5.5",
            status=200,
            analysed=True,
            usage=Usage(3000, 0, 2000, 0, 5),
            drift=["cache_write_tokens:not_billed_by_price_row"],
        ),
        # a GPT-5.6 write, priced: 952*2 + 2048*0.2 + 3000*2.5 + 400*12 per 1M
        RequestRecord(
            "w",
            now - 30,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-5.6-terra",
            status=200,
            analysed=True,
            usage=Usage(6000, 2048, 3000, 0, 400),
            cost_usd=0.0146136,
            saved_usd=0.0021864,
            missed_usd=0.0,
            cost_breakdown=Breakdown(0.001904, 0.0004096, 0.0075, 0.0048),
        ),
        RequestRecord(
            "p1",
            now - 20,
            "t",
            "anthropic",
            "/v1/messages",
            model="claude-sonnet-4-6",
            status=200,
            analysed=True,
            usage=Usage(5000, 0, 4000, 0, 5),
            cost_usd=0.015,
            saved_usd=-0.003,
            missed_usd=0.0108,
            miss_reason="volatile-time; path=system[0]; offset=14",
            provider_miss_reason="system_changed",
            provider_missed_tokens=4000,
            provider_missed_usd=0.0108,
        ),
        RequestRecord(
            "p2",
            now - 10,
            "t",
            "anthropic",
            "/v1/messages",
            model="claude-sonnet-4-6",
            status=200,
            analysed=True,
            usage=Usage(5000, 0, 4000, 0, 5),
            cost_usd=0.015,
            saved_usd=-0.003,
            missed_usd=0.0,
            provider_miss_reason="system_changed",
            provider_missed_tokens=1000,
            provider_missed_usd=0.0027,
        ),
    ]
    box: dict = {}

    async def fill():
        ledger = Ledger(str(tmp_path / "ledger.sqlite"))
        for r in recs:
            r.chain = ["aa" * 8]
            ledger.handle(r)
        await ledger.flush()
        box["ledger"] = ledger

    asyncio.run(fill())
    try:
        with serve(Starlette(routes=routes(box["ledger"], Metrics()))) as url:
            dom = Elements(dump_dom(chromium_path, f"{url}/prefixgate/dashboard?since=1h"))
    finally:
        box["ledger"].close_sync()
    assert dom.find("body")[0]["data-state"] == "ready"
    assert "hidden" not in dom.by_id["drift-notice"]
    assert dom.text["drift-count"] == "2 request(s)"
    drift = dom.find("li", data_field="cache_write_tokens")
    assert len(drift) == 1 and drift[0]["data-model"] == "gpt-5.5" and drift[0]["data-count"] == "2"
    notice = dom.text["drift-rows"]
    assert "usage of gpt-5.5 (openai) reports cache_write_tokens the rules do not expect" in notice
    assert "--prices" in notice and "analyzer/cache_rules/openai.py" in notice
    assert "hidden" not in dom.by_id["provider-miss"]
    rows = [r for r in dom.find("tr") if "data-provider-reason" in r]
    assert [(r["data-provider-reason"], r["data-count"]) for r in rows] == [("system_changed", "2")]
    cells = [c for c in dom.find("td") if c.get("data-value")]
    assert any(float(c["data-value"]) == pytest.approx(0.0135) for c in cells)
    text = dom.text["provider-reasons"]
    assert format_usd(0.0135) in text and "5,000" in text and "1 of 2" in text
    # the OpenAI write is drawn in the cost chart's cache-write series, as Anthropic's are
    writes = [float(r["data-value"]) for r in dom.find("rect", data_series="cache_write_usd")]
    assert sum(writes) == pytest.approx(0.0075)


def test_no_drift_notice_and_no_provider_table_without_them(dashboard_app, chromium_path):
    app, _ = dashboard_app
    with serve(app) as url:
        dom = Elements(dump_dom(chromium_path, f"{url}/prefixgate/dashboard?token=adm1n&since=24h"))
    assert dom.find("body")[0]["data-state"] == "ready"
    assert "hidden" in dom.by_id["drift-notice"] and "hidden" in dom.by_id["provider-miss"]


def test_a_pool_shows_one_row_per_replica_with_its_health(tmp_path, chromium_path):
    a, b = "http://engine-0:8000/v1", "http://engine-1:8000/v1"
    recs = records()
    for i, r in enumerate(recs):
        r.ts = time.time() - 3000 + i * 100
        r.upstream, r.replica = "llama", (a if i % 3 else b)
    box: dict = {}

    async def fill():
        ledger = Ledger(str(tmp_path / "pool.sqlite"))
        for r in recs:
            ledger.handle(r)
        await ledger.flush()
        box["ledger"] = ledger

    asyncio.run(fill())
    live = {
        "llama": {
            "replicas": [{"url": a, "health": {"state": "up"}}, {"url": b, "health": {"state": "down"}}]
        }
    }
    app = Starlette(routes=routes(box["ledger"], Metrics(), replicas=lambda: live))
    try:
        with serve(app) as url:
            dom = Elements(dump_dom(chromium_path, f"{url}/prefixgate/dashboard?since=24h"))
    finally:
        box["ledger"].close_sync()
    assert dom.find("body")[0]["data-state"] == "ready"
    assert "hidden" not in dom.by_id["per-upstream"]  # one upstream, but a pool
    rows = {r["data-replica"]: r for r in dom.find("tr") if "data-replica" in r}
    assert set(rows) == {a, b} and {r["data-pool"] for r in rows.values()} == {"llama"}
    assert rows[a]["data-health"] == "up" and rows[b]["data-health"] == "down"
    assert [r["data-upstream"] for r in dom.find("tr") if "data-upstream" in r] == ["llama"]
