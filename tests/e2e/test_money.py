"""End to end for the money layer: SDKs → prefixgate (uvicorn) → emulator (uvicorn).

Cost, savings and a miss reason for a timestamp in the system prompt, through the real
proxy; /prefixgate/stats, /metrics, the ledger file and the dashboard agreeing.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from analyzer.cost import format_usd
from analyzer.logs.cli import run_analysis
from analyzer.logs.config import AnalyzeConfig
from analyzer.pricing import PriceTable
from proxy.app import create_app
from proxy.cli import cli
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from tests.support.browser import Elements, dump_dom, screenshot
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

BODY = "You are the billing assistant for ACME; answer in one short paragraph. " * 100  # ~7 KB
OPENAI_KEY = "sk-money-e2e-openai-KEY"
ANTHROPIC_KEY = "sk-ant-money-e2e-KEY"
ADMIN = "admin-e2e-token"
PRICES = PriceTable.load()


def system(ts: str) -> str:
    return f"Current time: {ts}. {BODY}"


@contextlib.contextmanager
def gateway(tmp_path, **config):
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            anthropic_base=upstream,
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            admin_token=ADMIN,
            **config,
        )
        app = create_app(cfg)
        with serve(app) as proxy:
            yield proxy, app


def admin_get(proxy: str, path: str) -> httpx.Response:
    return httpx.get(f"{proxy}{path}", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)


def openai_cost(usage, price) -> tuple[float, float]:
    prompt, cached, out = (
        usage.prompt_tokens,
        usage.prompt_tokens_details.cached_tokens,
        usage.completion_tokens,
    )
    cost = ((prompt - cached) * price.input + cached * price.cache_read + out * price.output) / 1e6
    return cost, (prompt * price.input + out * price.output) / 1e6 - cost


def test_openai_cost_savings_and_timestamp_miss(tmp_path, chromium_path):
    price = PRICES.lookup("gpt-4o-mini")
    with gateway(tmp_path) as (proxy, app):
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key=OPENAI_KEY, max_retries=0)

        def ask(ts: str, question: str):
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini",
                messages=[{"role": "system", "content": system(ts)}, {"role": "user", "content": question}],
            )
            return raw.headers, raw.parse()

        h1, r1 = ask("2026-11-30T10:00:01Z", "What is my balance?")
        h2, r2 = ask("2026-11-30T10:00:01Z", "When is my invoice due?")
        h3, r3 = ask("2026-11-30T10:04:59Z", "When is my invoice due?")

        assert r2.usage.prompt_tokens_details.cached_tokens >= 1024  # the provider cached the repeat
        assert "x-prefixgate-miss-reason" not in h1 and "x-prefixgate-miss-reason" not in h2
        reason = h3["x-prefixgate-miss-reason"]
        assert reason.startswith("volatile-time; path=messages[0]; offset=")
        assert int(reason.rsplit("=", 1)[1]) == len(
            '{"role":"system","content":[{"type":"text","text":"Current time: 2026-11-30T10:0'
        )
        assert r3.usage.prompt_tokens_details.cached_tokens == 0

        want = [openai_cost(r.usage, price) for r in (r1, r2, r3)]
        stats = admin_get(proxy, "/prefixgate/stats").json()
        assert stats["requests"] == 3 and stats["unpriced"] == 0
        assert abs(stats["cost_usd"] - sum(c for c, _ in want)) < 1e-9
        assert abs(stats["saved_usd"] - sum(s for _, s in want)) < 1e-9
        assert stats["saved_usd"] > 0

        assert httpx.get(f"{proxy}/prefixgate/stats").status_code == 401
        assert httpx.get(f"{proxy}/prefixgate/metrics").status_code == 401
        metrics = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(admin_get(proxy, "/prefixgate/metrics").text)
            for s in f.samples
        }
        assert (
            abs(
                metrics[("prefixgate_cost_usd_total", (("model", "gpt-4o-mini"), ("provider", "openai")))]
                - stats["cost_usd"]
            )
            < 1e-9
        )
        assert metrics[("prefixgate_miss_reasons_total", (("reason", "volatile-time"),))] == 1
        assert metrics[("prefixgate_prefix_hits_total", (("provider", "openai"),))] == 1

        # Missed savings, the one definition (analyzer.missed): r3 is r2 but for the time, so its
        # whole prompt would have been read from the cache.
        missed = stats["missed_usd"]
        assert missed > 0 and abs(missed - expected_missed(r3.usage.prompt_tokens)) < 1e-9
        assert (
            abs(
                metrics[("prefixgate_missed_usd_total", (("model", "gpt-4o-mini"), ("provider", "openai")))]
                - missed
            )
            < 1e-9
        )
        summary = admin_get(proxy, "/prefixgate/api/summary?since=all").json()
        assert abs(summary["missed_usd"] - missed) < 1e-9
        assert summary["miss_reasons"] == [
            {"reason": "volatile-time", "count": 1, "missed_usd": pytest.approx(missed, abs=1e-9)}
        ]

        page = f"{proxy}/prefixgate/dashboard?token={ADMIN}&since=1h"
        dom = Elements(dump_dom(chromium_path, page))
        screenshot(chromium_path, page, str(tmp_path / "dashboard.png"))
        stats_after = admin_get(
            proxy, "/prefixgate/stats"
        ).json()  # the page's API calls are not proxied requests
    assert dom.find("body")[0]["data-state"] == "ready"
    assert float(dom.by_id["card-spent"]["data-value"]) == pytest.approx(stats_after["cost_usd"], abs=1e-9)
    assert float(dom.by_id["card-saved"]["data-value"]) == pytest.approx(stats_after["saved_usd"], abs=1e-9)
    assert float(dom.by_id["card-missed"]["data-value"]) == pytest.approx(stats_after["missed_usd"], abs=1e-9)
    assert float(dom.by_id["card-hit"]["data-value"]) == pytest.approx(
        stats_after["cached_tokens"] / stats_after["input_tokens"]
    )
    assert [r["data-reason"] for r in dom.find("div", **{"class": "reason"})] == ["volatile-time"]
    assert len(dom.find("rect", **{"class": "bar"})) > 0
    assert stats_after["rewrites"] == {} and stats_after["rewritten"] == 0  # --rewrite is off
    assert (
        not [r for r in dom.find("tr") if "data-rewrite" in r]
        and dom.text["rewrites-none"] == "none in this range"
    )

    # after shutdown the ledger holds every request, and no key anywhere
    rows = (
        sqlite3.connect(str(tmp_path / "ledger.sqlite"))
        .execute("SELECT miss_reason, cost_usd, cached_tokens, chain, body FROM requests ORDER BY id")
        .fetchall()
    )
    assert [r[0] is None for r in rows] == [True, True, False]
    assert rows[2][0].startswith("volatile-time")
    assert abs(sum(r[1] for r in rows) - stats_after["cost_usd"]) < 1e-9
    assert all(r[3] and r[4] is None for r in rows)  # chains kept, bodies not logged
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert OPENAI_KEY.encode() not in f.read_bytes(), f

    # report and analyze over the same ledger: the same missed dollars, formatted alike
    report = json.loads(
        CliRunner().invoke(cli, ["report", "--ledger", str(tmp_path / "ledger.sqlite"), "--json"]).output
    )
    assert abs(report["missed_usd"] - stats_after["missed_usd"]) < 1e-9
    analysed, errors = run_analysis([str(tmp_path / "ledger.sqlite")], AnalyzeConfig(prices=PRICES))
    assert errors == [] and abs(analysed["money"]["missed_usd"] - stats_after["missed_usd"]) < 1e-9
    assert abs(analysed["money"]["spent_usd"] - stats_after["cost_usd"]) < 1e-9
    assert analysed["hit_rate"]["realized"] <= analysed["hit_rate"]["allowed"]
    table = CliRunner().invoke(cli, ["report", "--ledger", str(tmp_path / "ledger.sqlite")]).output
    assert format_usd(stats_after["missed_usd"]) in table


def expected_missed(prompt_tokens: int) -> float:
    """r3's missed dollars by hand: the system and user segments of r3 equal r2's but for the
    time, 7,206 + 89 canonical bytes ≈ 1,824 tokens; OpenAI caches 1,024 + 6 × 128 = 1,792 of
    them; none were read, so 1,792 × (0.15 − 0.075) per 1M = $0.0001344 (at most the prompt's
    uncached tokens)."""
    assert prompt_tokens >= 1792
    return 1792 * (0.15 - 0.075) / 1e6


def test_anthropic_write_premium_and_unpriced_model(tmp_path):
    price = PRICES.lookup("claude-sonnet-4-6")
    with gateway(tmp_path, log_bodies=True) as (proxy, app):
        client = anthropic.Anthropic(base_url=proxy, api_key=ANTHROPIC_KEY, max_retries=0)

        def ask(ts: str, model: str = "claude-sonnet-4-6"):
            blocks = [{"type": "text", "text": system(ts), "cache_control": {"type": "ephemeral"}}]
            raw = client.messages.with_raw_response.create(
                model=model, max_tokens=20, system=blocks, messages=[{"role": "user", "content": "hi"}]
            )
            return raw.headers, raw.parse()

        _, first = ask("2026-11-30T10:00:01Z")
        _, second = ask("2026-11-30T10:00:01Z")
        headers, third = ask("2026-11-30T10:07:30Z")
        ask("2026-11-30T10:07:30Z", model="claude-private-tune")
        u1, u2 = first.usage, second.usage
        assert (
            u1.cache_creation_input_tokens > 0
            and u2.cache_read_input_tokens == u1.cache_creation_input_tokens
        )
        assert headers["x-prefixgate-miss-reason"].startswith("volatile-time; path=system[0]; offset=")
        stats = admin_get(proxy, "/prefixgate/stats").json()
        summary = admin_get(proxy, "/prefixgate/api/summary?since=all").json()

    def cost(u) -> float:
        return (
            u.input_tokens * price.input
            + (u.cache_creation_input_tokens or 0) * price.cache_write_5m
            + (u.cache_read_input_tokens or 0) * price.cache_read
            + u.output_tokens * price.output
        ) / 1e6

    model_row = next(m for m in stats["models"] if m["model"] == "claude-sonnet-4-6")
    assert abs(model_row["cost_usd"] - (cost(u1) + cost(u2) + cost(third.usage))) < 1e-9
    rows = (
        sqlite3.connect(str(tmp_path / "ledger.sqlite"))
        .execute("SELECT saved_usd, model, cost_usd, body FROM requests ORDER BY id")
        .fetchall()
    )
    assert rows[0][0] < 0  # a cache write costs 1.25x input: caching lost money on the first request
    assert rows[1][0] > 0
    assert rows[3][1] == "claude-private-tune" and rows[3][2] is None  # unpriced, not $0
    assert stats["unpriced"] == 1 and summary["unpriced"] == 1
    # the third request is the second but for the time: its system block was written again
    # (the 5-minute write premium) instead of read. Missed: the reusable prompt's tokens, the
    # written ones at 3.75 − 0.30, the rest at 3.00 − 0.30 per 1M (analyzer.missed, cost.missed_usd).
    u3 = third.usage
    total = u3.input_tokens + u3.cache_creation_input_tokens + (u3.cache_read_input_tokens or 0)
    assert u3.cache_creation_input_tokens > 1024 and not u3.cache_read_input_tokens
    reusable_tokens = min(
        -(-(7169 + 42) // 4), total
    )  # system block (7,169 canonical bytes) + the "hi" turn (42)
    written = min(reusable_tokens, u3.cache_creation_input_tokens)
    want_missed = (written * (3.75 - 0.30) + (reusable_tokens - written) * (3.00 - 0.30)) / 1e6
    missed_rows = (
        sqlite3.connect(str(tmp_path / "ledger.sqlite"))
        .execute("SELECT missed_usd FROM requests ORDER BY id")
        .fetchall()
    )
    assert (
        abs(missed_rows[2][0] - want_missed) < 1e-9 and missed_rows[3][0] is None
    )  # the unpriced model: null, never $0
    assert b"Current time" in rows[0][3]  # --log-bodies keeps the prompt …
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert ANTHROPIC_KEY.encode() not in f.read_bytes(), f  # … never the key
    assert "Current time" in summary["top_prefixes"][0]["preview"]
    for key in (
        "requests",
        "input_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "output_tokens",
        "errors",
        "unpriced",
    ):
        assert summary[key] == stats[key], key
    for key in ("cost_usd", "saved_usd", "missed_usd"):
        assert abs(summary[key] - stats[key]) < 1e-9, key


def test_rewrites_counted_alike_in_stats_summary_metrics_and_report(tmp_path):
    with gateway(tmp_path, rewrite="safe") as (proxy, _app):
        client = anthropic.Anthropic(base_url=proxy, api_key=ANTHROPIC_KEY, max_retries=0)
        for question in (
            "first",
            "second",
        ):  # a long system prompt and no cache_control: the proxy adds breakpoints
            raw = client.messages.with_raw_response.create(
                model="claude-sonnet-4-6",
                max_tokens=8,
                system=BODY,
                messages=[{"role": "user", "content": question}],
            )
            assert "add-breakpoints" in raw.headers["x-prefixgate-rewrites"].split(",")
        stats = admin_get(proxy, "/prefixgate/stats").json()
        summary = admin_get(proxy, "/prefixgate/api/summary?since=all").json()
        metrics = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(admin_get(proxy, "/prefixgate/metrics").text)
            for s in f.samples
        }
    assert stats["rewrites"]["add-breakpoints"] == 2 and stats["rewritten"] == 2
    assert summary["rewrites"] == stats["rewrites"] and summary["rewritten"] == 2
    assert (
        stats["providers"]["anthropic"]["rewrites"]
        == summary["providers"]["anthropic"]["rewrites"]
        == stats["rewrites"]
    )
    for rewrite, n in stats["rewrites"].items():
        assert metrics[("prefixgate_rewrites_total", (("provider", "anthropic"), ("rewrite", rewrite)))] == n
    out = CliRunner().invoke(cli, ["report", "--ledger", str(tmp_path / "ledger.sqlite")]).output
    assert "add-breakpoints" in out and "rewritten requests" in out


def test_serve_refuses_bad_price_file_and_corrupt_ledger(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"models": [{"provider": "openai", "model": "gpt-x", "input": "cheap", "output": 1}]})
    )
    result = CliRunner().invoke(
        cli, ["serve", "--port", "0", "--prices", str(prices), "--ledger", str(tmp_path / "l.sqlite")]
    )
    assert result.exit_code == 2
    assert "models[0] (gpt-x): field 'input'" in result.output
    ledger = tmp_path / "corrupt.sqlite"
    ledger.write_bytes(b"\x00garbage" * 1000)
    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--ledger", str(ledger)])
    assert result.exit_code == 2 and str(ledger) in result.output and "not a database" in result.output
