"""The dashboard's "this replica" / "whole fleet" switch in headless Chromium, on a real Redis."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from starlette.applications import Starlette

from proxy.accounting.fleet import Fleet
from proxy.accounting.fleet_redis import FleetRedis
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.accounting.stats import Stats
from proxy.reporting.dashboard import routes
from tests.support.request_records import records
from tests.support.servers import serve


@pytest.fixture
def fleet_app(tmp_path, redis_url):
    """This replica's ledger holds 3 of the records; the fleet (another replica flushed) all of them."""
    url, prefix = redis_url
    store = f"{url}?key_prefix={prefix}"
    recs = records()
    now = time.time()
    for i, r in enumerate(recs):
        r.ts = now - 600 + i * 10
        r.chain = ["aa" * 8, "bb" * 8] if r.prefix_segments else ["cc" * 8]
    everyone = Stats()
    box: dict = {}

    async def fill():
        other = Fleet(FleetRedis(store))
        for r in recs:
            other.handle(r)
            everyone.handle(r)
        assert await other.flush()
        await other.aclose()
        ledger = Ledger(str(tmp_path / "ledger.sqlite"))
        for r in recs[:3]:
            ledger.handle(r)
        await ledger.flush()
        box["ledger"] = ledger

    asyncio.run(fill())
    metrics = Metrics()
    metrics.attach_fleet(Fleet(FleetRedis(store)))  # used on the server's own loop only
    yield Starlette(routes=routes(box["ledger"], metrics)), everyone.to_json(), metrics
    box["ledger"].close_sync()


def test_the_switch_shows_the_whole_fleet_and_fits_a_phone_and_a_desktop(fleet_app, chromium_path, tmp_path):
    from tests.support.cdp import LAYOUT_JS, Browser

    app, want, _ = fleet_app
    with serve(app) as url, Browser(chromium_path) as browser:
        for width in (1400, 420):
            browser.open(f"{url}/prefixgate/dashboard?since=24h", width)
            assert (
                browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
                == "ready"
            )
            assert browser.evaluate("document.getElementById('scope').hidden") is False  # a fleet exists
            assert browser.evaluate("document.body.dataset.scope") == "replica"
            assert browser.evaluate("document.getElementById('card-spent-sub').textContent").startswith(
                "3 requests"
            )
            browser.evaluate("document.querySelector('#scope button[data-scope=fleet]').click()")
            assert (
                browser.wait_for("document.body.dataset.scope === 'fleet' && document.body.dataset.state")
                == "ready"
            )
            assert browser.evaluate("document.querySelector('#scope button.active').dataset.scope") == "fleet"
            spent = browser.evaluate("document.getElementById('card-spent').dataset.value")
            assert float(spent) == pytest.approx(want["cost_usd"], abs=2e-9)
            assert browser.evaluate("document.getElementById('card-spent-sub').textContent").startswith(
                f"{want['requests']} requests across the fleet"
            )
            models = browser.evaluate(
                "[...document.querySelectorAll('#models tr[data-model]')].map((n) => n.dataset.model)"
            )
            assert models == [m["model"] for m in want["models"]]
            assert browser.evaluate("document.querySelectorAll('#chart-hit .hit-point').length") >= 1
            # the replica's own sections are hidden, the note says why
            assert browser.evaluate("document.getElementById('chart-cost').offsetParent") is None
            assert browser.evaluate("document.getElementById('scope-note').hidden") is False
            assert browser.evaluate("document.getElementById('error').hidden") is True
            layout = browser.evaluate(LAYOUT_JS)
            assert layout["scroll_width"] <= layout["viewport"] and layout["wide"] == [], (width, layout)
            browser.screenshot(str(tmp_path / f"fleet-{width}.png"))
            browser.evaluate("document.querySelector('#scope button[data-scope=replica]').click()")
            assert (
                browser.wait_for("document.body.dataset.scope === 'replica' && document.body.dataset.state")
                == "ready"
            )
            assert browser.evaluate("document.getElementById('card-spent-sub').textContent").startswith(
                "3 requests"
            )


def test_a_slow_fleet_answer_does_not_overwrite_the_scope_clicked_after_it(fleet_app, chromium_path):
    """The fleet read may take its deadline (a hung Redis): clicking "whole fleet" then "this
    replica" drew the fleet's late answer under the "this replica" switch."""
    from tests.support.cdp import Browser

    app, _, metrics = fleet_app
    hours, answered = metrics.fleet.hours, threading.Event()

    async def slow_hours(since=None):
        await asyncio.sleep(1.0)
        try:
            return await hours(since)
        finally:
            answered.set()

    metrics.fleet.hours = slow_hours
    with serve(app) as url, Browser(chromium_path) as browser:
        browser.open(f"{url}/prefixgate/dashboard?since=24h", 1400)
        assert (
            browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
            == "ready"
        )
        browser.evaluate("document.querySelector('#scope button[data-scope=fleet]').click()")
        browser.evaluate("document.querySelector('#scope button[data-scope=replica]').click()")
        assert browser.wait_for("document.body.dataset.state === 'ready'") is True
        # the slow fleet answer arrives after; then let its (superseded) handler run
        assert answered.wait(30)
        browser.evaluate("new Promise((r) => setTimeout(() => r(true), 500))")
        assert browser.evaluate("document.body.dataset.scope") == "replica"
        assert browser.evaluate("document.querySelector('#scope button.active').dataset.scope") == "replica"
        assert browser.evaluate("document.getElementById('card-spent-sub').textContent").startswith(
            "3 requests"
        )
        assert browser.evaluate("document.getElementById('chart-cost').offsetParent") is not None


def test_a_failed_switch_keeps_the_scope_whose_numbers_are_shown(fleet_app, chromium_path):
    """The fleet endpoint failing (HTTP 500): the error is said, and the switch stays on "this
    replica", whose numbers are still on screen (it said nothing and a range click loaded the fleet)."""
    from tests.support.cdp import Browser

    app, _, metrics = fleet_app

    async def broken(since=None):
        raise RuntimeError("broken")

    metrics.fleet.hours = broken
    with serve(app) as url, Browser(chromium_path) as browser:
        browser.open(f"{url}/prefixgate/dashboard?since=24h", 1400)
        assert (
            browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
            == "ready"
        )
        browser.evaluate("document.querySelector('#scope button[data-scope=fleet]').click()")
        assert (
            browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
            == "error"
        )
        assert "fleet: HTTP 500" in browser.evaluate("document.getElementById('error').textContent")
        assert browser.evaluate("document.querySelector('#scope button.active').dataset.scope") == "replica"
        assert browser.evaluate("document.body.dataset.scope") == "replica"
        browser.evaluate("document.querySelector('#range button[data-since=\"7d\"]').click()")
        assert (
            browser.wait_for("document.body.dataset.state !== 'loading' && document.body.dataset.state")
            == "ready"
        )
        assert browser.evaluate("document.getElementById('card-spent-sub').textContent").startswith(
            "3 requests"
        )
        assert browser.evaluate("document.getElementById('error').hidden") is True
