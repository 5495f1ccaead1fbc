"""proxy.accounting.counters: one table, its Python and SQL halves agreeing on every record."""

from __future__ import annotations

import sqlite3

import pytest

from analyzer.cost import cost_of
from analyzer.pricing import PriceTable
from analyzer.usage import Usage
from proxy.accounting.counters import COUNTERS, INDEX, OTHER, ZERO, Cap, Counter, Metric, contributions, finish
from proxy.accounting.ledger_schema import INSERT, SCHEMA, row_for
from proxy.accounting.records import RequestRecord

PRICES = PriceTable.load()


def variety() -> list[RequestRecord]:
    """Records covering every branch a counter has: no usage, unpriced, clamped usage, an
    unknown prefix, errors with and without a status, rewrites, unanalysed bodies."""
    out = []
    cases = [
        {"model": "gpt-4o-mini", "usage": Usage(2000, 1024, 0, 0, 50), "prefix_segments": 2},
        {"model": "claude-sonnet-4-5", "usage": Usage(12000, 0, 10000, 4000, 9), "rewrites": ["add-breakpoints"]},
        {"model": "claude-sonnet-4-5", "usage": Usage(100, 60, 60, 0, 1), "prefix_segments": None, "prefix_bytes": None},  # uncached clamps at 0
        {"model": "private", "usage": Usage(10, 0, 0, 0, 1), "rewrites": ["add-breakpoints", "cap-breakpoints"]},
        {"model": "gpt-4o", "usage": Usage(5, 0, 0, 0, 10**9, flags=("usage.completion_tokens:too_large",))},
        {"model": None, "usage": None, "status": 502, "error": "upstream_unreachable", "analysed": False},
        {"model": "gpt-4o", "usage": None, "status": 0, "error": "client_disconnected"},
        {"model": "gpt-4o", "usage": Usage(0, 0, 0, 0, 0), "status": 429, "rewrites": ["skipped-error"]},
        {"model": "gpt-5.6-terra", "usage": Usage(6000, 2048, 3000, 0, 400)},  # OpenAI writes, billed
        {"model": "gpt-6.2-sol", "usage": Usage(6000, 0, 3000, 0, 4, cache_write_12h_tokens=2000)},
        {"model": "gpt-5.5", "usage": Usage(3000, 0, 2000, 0, 5), "drift": ["cache_write_tokens:not_billed_by_price_row"]},
        {"model": "claude-sonnet-4-5", "usage": Usage(10, 0, 0, 0, 1, drift=("iterations[x]:unknown_type",)),
         "drift": ["iterations[x]:unknown_type"]},
        {"model": "gpt-5.6-terra", "usage": Usage(6000, 0, 3000, 0, 4), "flags": ["cache_write_tokens:ttl_split_unknown"]},
    ]
    for i, kw in enumerate(cases):
        kw.setdefault("status", 200)
        kw.setdefault("analysed", True)
        r = RequestRecord(f"r{i}", 1_700_000_000.0 + i, "t", "anthropic" if "claude" in (kw.get("model") or "") else "openai",
                          "/v1/x", **kw)
        cost = cost_of(r.usage, PRICES.lookup(r.model)) if not r.flags else cost_of(None, None)
        r.cost_usd, r.saved_usd, r.cost_breakdown = cost.cost_usd, cost.saved_usd, cost.parts
        r.missed_usd = None if not cost.priced or r.prefix_segments is None else 0.000125
        out.append(r)
    return out


def test_each_counter_adds_the_same_in_python_and_in_sql():
    # The contract that keeps /prefixgate/stats (Python) and the ledger summary (SQL) equal.
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    records = variety()
    for r in records:
        conn.execute(INSERT, row_for(r, log_bodies=False))
    for c in COUNTERS:
        in_sql = [v for (v,) in conn.execute(f"SELECT {c.sql} FROM requests ORDER BY id")]
        in_python = [c.of(r) for r in records]
        assert [v or 0 for v in in_sql] == pytest.approx([float(v) for v in in_python], abs=1e-15), c.name


def test_contributions_is_every_counter_at_once():
    for r in variety():
        assert contributions(r) == [c.of(r) for c in COUNTERS]


def test_each_kind_of_counter_adds_what_it_says():
    r = variety()[1]  # an Anthropic cache write, priced, rewritten
    d = dict(zip((c.name for c in COUNTERS), contributions(r)))
    assert (d["requests"], d["input_tokens"], d["cache_write_tokens"], d["uncached_input_tokens"]) == (1, 12000, 10000, 2000)
    assert d["rewritten"] and d["priced"] and not d["unpriced"] and d["cost_usd"] == r.cost_usd


def test_finish_keeps_money_null_never_zero_when_nothing_was_priced():
    sums = list(ZERO)
    sums[INDEX["requests"]] = sums[INDEX["unpriced"]] = 2
    out = finish(sums)
    assert out["cost_usd"] is None and out["saved_usd"] is None and out["missed_usd"] is None
    sums[INDEX["priced"]], sums[INDEX["cost_usd"]] = 1, -0.0
    assert finish(sums)["cost_usd"] == 0.0 and str(finish(sums)["cost_usd"]) == "0.0"  # never "-0.0"
    assert "priced" not in out and "uncached_input_tokens" not in out  # kept, never shown


def test_names_are_unique_and_the_table_is_checked():
    assert len({c.name for c in COUNTERS}) == len(COUNTERS)
    with pytest.raises(ValueError, match="kind"):
        Counter("x", "1", "1", "dollars", "help")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="labels"):
        Metric("prefixgate_x", ("model",))


def test_cap_keeps_the_first_names_and_folds_the_rest():
    cap = Cap(2)
    assert [cap(n) for n in ("a", "b", "c", "a", "d", "b")] == ["a", "b", OTHER, "a", OTHER, "b"]


def test_rules_drift_rows_count_the_rows_with_drift_in_python_and_sql():
    records = variety()
    d = [dict(zip((c.name for c in COUNTERS), contributions(r))) for r in records]
    assert sum(x["rules_drift_rows"] for x in d) == 2 and sum(x["unpriced"] for x in d) == 5  # + the private, clamped, flagged
    writes = [x["cache_write_tokens"] for x, r in zip(d, records) if r.model and r.model.startswith("gpt-")]
    assert 3000 in writes and 2000 in writes  # OpenAI writes count like Anthropic's
    priced_56 = next(r for r in records if r.model == "gpt-5.6-terra" and not r.flags)
    assert priced_56.cost_breakdown.cache_write_usd == 3000 * 2.5 / 1e6
