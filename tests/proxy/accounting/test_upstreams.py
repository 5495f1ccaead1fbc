"""Per-upstream accounting: the ledger's ``upstream`` column, stats, summary, metrics, report,
and prices looked up under an upstream's ``prices`` key."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from analyzer.logs.ledger_columns import COLUMN_TYPES, COLUMNS
from analyzer.pricing import Price, PriceTable
from analyzer.usage import Usage
from proxy.accounting.counters import OTHER
from proxy.accounting.ledger import open_ledger, row_for
from proxy.accounting.metrics import Metrics
from proxy.accounting.money import Money
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.cli import cli
from proxy.exchange import Exchange
from proxy.reporting.report_tables import render_table
from proxy.reporting.summary import summarize
from tests.support.prometheus import samples
from tests.support.request_records import T0, write


def recs() -> list[RequestRecord]:
    """Three upstreams: the default openai one, a named deepseek one (openai protocol), and a
    record written without one (it counts under its provider's name)."""
    out = []
    for i in range(3):
        out.append(
            RequestRecord(
                f"o{i}",
                T0 + i,
                "t",
                "openai",
                "/v1/chat/completions",
                model="gpt-4o-mini",
                status=200,
                analysed=True,
                usage=Usage(1000, 512 * (i > 0), 0, 0, 10),
                prefix_segments=int(i > 0),
                cost_usd=0.0002,
                saved_usd=0.00001 * i,
                missed_usd=0.0,
                upstream="openai",
            )
        )
    for i in range(2):
        out.append(
            RequestRecord(
                f"d{i}",
                T0 + 10 + i,
                "t",
                "openai",
                "/v1/chat/completions",
                model="deepseek-v4-flash",
                status=200,
                analysed=True,
                usage=Usage(3000, 2048, 0, 0, 40),
                prefix_segments=1,
                cost_usd=0.0001,
                saved_usd=0.0002,
                missed_usd=0.0,
                upstream="deepseek",
            )
        )
    out.append(
        RequestRecord(
            "x",
            T0 + 20,
            "t",
            "openai",
            "/v1/chat/completions",
            model="mystery",
            status=200,
            analysed=True,
            usage=Usage(10, 0, 0, 0, 1),
            upstream="deepseek",
        )
    )  # unpriced
    out.append(
        RequestRecord(
            "a",
            T0 + 30,
            "t",
            "anthropic",
            "/v1/messages",
            model="private",
            status=200,
            analysed=True,
            usage=Usage(50, 0, 0, 0, 5),
        )
    )  # upstream None: an older record
    return out


def test_the_ledger_has_an_upstream_text_column_and_row_for_writes_it(tmp_path):
    assert ("upstream", "TEXT") in COLUMN_TYPES
    r = recs()[3]
    assert row_for(r, False)[COLUMNS.index("upstream")] == "deepseek"
    assert row_for(recs()[-1], False)[COLUMNS.index("upstream")] is None
    path = str(tmp_path / "l.sqlite")
    write(path, recs())
    conn = sqlite3.connect(path)
    got = [row[0] for row in conn.execute("SELECT upstream FROM requests ORDER BY id")]
    assert got == ["openai"] * 3 + ["deepseek"] * 3 + [None]


def test_an_older_ledger_gains_the_upstream_column_and_its_rows_count_under_the_provider(tmp_path):
    path = str(tmp_path / "old.sqlite")
    old = [(n, k) for n, k in COLUMN_TYPES if n != "upstream"]
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE requests (id INTEGER PRIMARY KEY, {', '.join(f'{n} {k}' for n, k in old)})")
    conn.execute(
        "INSERT INTO requests (request_id, ts, provider, status, analysed, input_tokens, cached_tokens, "
        "cache_write_tokens, output_tokens) VALUES ('old', 1.0, 'anthropic', 200, 1, 10, 0, 0, 1)"
    )
    conn.commit()
    conn.close()
    conn = open_ledger(path)
    types = {row[1]: row[2] for row in conn.execute("PRAGMA table_info(requests)")}
    assert types["upstream"] == "TEXT"
    s = summarize(conn)
    assert list(s["upstreams"]) == ["anthropic"] and s["upstreams"]["anthropic"]["requests"] == 1
    conn.close()


def test_stats_group_by_upstream_with_the_top_level_keys_and_null_money_when_unpriced():
    stats = Stats()
    for r in recs():
        stats.handle(r)
    out = stats.to_json()
    ups = out["upstreams"]
    assert list(ups) == ["anthropic", "deepseek", "openai"]
    shown = {k for k, v in out.items() if not isinstance(v, (dict, list))}
    for block in ups.values():
        assert set(block) == shown  # the same counter keys as the top level
    assert (
        ups["openai"]["requests"] == 3
        and ups["deepseek"]["requests"] == 3
        and ups["anthropic"]["requests"] == 1
    )
    assert ups["deepseek"]["cached_tokens"] == 4096 and ups["deepseek"]["unpriced"] == 1
    assert abs(ups["deepseek"]["cost_usd"] - 0.0002) < 1e-12
    assert ups["anthropic"]["cost_usd"] is None  # usage but no price: null, never $0
    assert sum(u["requests"] for u in ups.values()) == out["requests"]


def test_stats_upstream_names_are_capped():
    stats = Stats(max_upstreams=2)
    for i in range(5):
        stats.handle(RequestRecord(f"r{i}", 0.0, "t", "openai", "/v1/x", status=200, upstream=f"u{i}"))
    ups = stats.to_json()["upstreams"]
    assert list(ups) == ["other", "u0", "u1"] and ups[OTHER]["requests"] == 3


def test_summary_upstreams_equal_stats_for_the_same_records(tmp_path):
    path = str(tmp_path / "l.sqlite")
    rs = recs()
    write(path, rs)
    stats = Stats()
    for r in recs():
        stats.handle(r)
    want = stats.to_json()["upstreams"]
    conn = sqlite3.connect(path)
    got = summarize(conn)["upstreams"]
    assert list(got) == list(want)
    for name, block in want.items():
        for key, value in block.items():
            if isinstance(value, float):
                assert abs(got[name][key] - value) < 1e-9, (name, key)
            else:
                assert got[name][key] == value, (name, key)
    assert "token_hit_rate" in got["deepseek"] and "request_hit_rate" in got["deepseek"]


def test_summary_folds_upstreams_past_the_cap(tmp_path):
    from proxy.reporting import summary

    path = str(tmp_path / "l.sqlite")
    write(
        path,
        [
            RequestRecord(f"r{i}", T0 + i, "t", "openai", "/v1/x", status=200, upstream=f"u{i % 4}")
            for i in range(7)
        ],
    )
    conn = sqlite3.connect(path)
    got = summary._upstreams(conn, "", [], limit=2)
    assert got[OTHER]["requests"] == 3 and sum(u["requests"] for u in got.values()) == 7 and len(got) == 3


def test_metrics_have_per_upstream_families_and_keep_the_old_series():
    m = Metrics()
    for r in recs():
        m.handle(r)
    s = samples(m)
    assert (
        s[
            (
                "prefixgate_requests_total",
                (("model", "gpt-4o-mini"), ("provider", "openai"), ("status", "2xx")),
            )
        ]
        == 3
    )
    assert s[("prefixgate_prefix_hits_total", (("provider", "openai"),))] == 4
    assert s[("prefixgate_upstream_requests_total", (("provider", "openai"), ("upstream", "deepseek")))] == 3
    assert s[("prefixgate_upstream_requests_total", (("provider", "openai"), ("upstream", "openai")))] == 3
    assert (
        s[("prefixgate_upstream_requests_total", (("provider", "anthropic"), ("upstream", "anthropic")))] == 1
    )  # NULL → provider
    assert (
        s[
            (
                "prefixgate_upstream_tokens_total",
                (("kind", "cache_read"), ("provider", "openai"), ("upstream", "deepseek")),
            )
        ]
        == 4096
    )
    assert (
        abs(
            s[("prefixgate_upstream_cost_usd_total", (("provider", "openai"), ("upstream", "deepseek")))]
            - 0.0002
        )
        < 1e-12
    )
    assert s[("prefixgate_upstream_unpriced_total", (("provider", "openai"), ("upstream", "deepseek")))] == 1
    assert (
        "prefixgate_upstream_cost_usd_total",
        (("provider", "anthropic"), ("upstream", "anthropic")),
    ) not in s  # never $0


def test_metric_upstream_labels_are_capped():
    m = Metrics(max_upstreams=2)
    for i in range(5):
        m.handle(RequestRecord(f"r{i}", 0.0, "t", "openai", "/v1/x", status=200, upstream=f"u{i}"))
    ups = {dict(k[1])["upstream"] for k in samples(m) if k[0] == "prefixgate_upstream_requests_total"}
    assert ups == {"u0", "u1", "other"}


def test_report_shows_a_per_upstream_table_only_with_more_than_one(tmp_path):
    path = str(tmp_path / "l.sqlite")
    write(path, recs())
    out = CliRunner().invoke(cli, ["report", "--ledger", path], catch_exceptions=False).output
    assert "per upstream" in out and "deepseek" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    data = json.loads(
        CliRunner().invoke(cli, ["report", "--ledger", path, "--json"], catch_exceptions=False).output
    )
    assert data["upstreams"]["deepseek"]["requests"] == 3
    one = str(tmp_path / "one.sqlite")
    write(one, recs()[:3])
    assert "per upstream" not in render_table(summarize(sqlite3.connect(one)))


def _priced(money: Money, model: str, upstream: str | None) -> RequestRecord:
    r = RequestRecord(
        "r",
        0.0,
        "t",
        "openai",
        "/v1/chat/completions",
        model=model,
        status=200,
        analysed=True,
        usage=Usage(1_000_000, 0, 0, 0, 0),
        upstream=upstream,
    )
    money.enrich(Exchange(r))
    return r


def test_an_upstream_prices_key_is_looked_up_first_then_the_model():
    table = PriceTable.load()
    table.add(Price("acme/gpt-4o-mini", "acme", 9.0, 9.0, 1.0))  # "acme" resells gpt-4o-mini at its own rate
    table.add(Price("house-model", "acme", 2.0, 2.0))  # a row of the key's provider, by bare name
    money = Money(table, upstream_prices={"resale": "acme", "ds": "deepseek"})
    assert _priced(money, "gpt-4o-mini", "resale").cost_usd == 9.0
    assert _priced(money, "gpt-4o-mini-2024-07-18", "resale").cost_usd == 9.0  # snapshot suffix under the key
    assert _priced(money, "house-model", "resale").cost_usd == 2.0
    mini = table.lookup("gpt-4o-mini")
    assert _priced(money, "gpt-4o-mini", "openai").cost_usd == mini.input  # no key: the model's own row
    assert _priced(money, "gpt-4o-mini", None).cost_usd == mini.input
    assert (
        _priced(money, "gpt-4o", "resale").cost_usd == table.lookup("gpt-4o").input
    )  # not under the key: falls back
    assert _priced(money, "deepseek-v4-flash", "ds").cost_usd == table.lookup("deepseek-v4-flash").input
    unpriced = _priced(money, "no-such-model", "resale")
    assert unpriced.cost_usd is None and unpriced.saved_usd is None  # null, never $0


def test_the_price_key_does_not_borrow_another_providers_row_by_bare_name():
    table = PriceTable([])
    table.add(Price("m", "other", 1.0, 1.0))
    table.add(Price("m2", "acme", 3.0, 3.0))
    assert table.lookup("m", "acme").provider == "other"  # only the fallback finds it
    assert table.lookup("m2", "acme").input == 3.0


def test_gemini_2_5_rows_have_cached_read_rates_and_a_source():
    table = PriceTable.load()
    for name in ("gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro"):
        row = table.lookup(name)
        assert row is not None and row.provider == "google", name
        assert row.cache_read is not None and 0 < row.cache_read < row.input, name
        assert row.source.startswith("https://") and row.date, name
    assert table.lookup("models/gemini-2.5-flash").model == "gemini-2.5-flash"  # the SDK's "models/…" names
