"""proxy.accounting.counters: one table, its Python and SQL halves agreeing on every record."""

from __future__ import annotations

import sqlite3

import pytest

from proxy.accounting.counters import (
    COUNTERS,
    INDEX,
    OTHER,
    ZERO,
    Cap,
    Counter,
    Metric,
    contributions,
    finish,
)
from proxy.accounting.ledger_schema import INSERT, SCHEMA, row_for
from tests.support.request_records import variety


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
    assert (d["requests"], d["input_tokens"], d["cache_write_tokens"], d["uncached_input_tokens"]) == (
        1,
        12000,
        10000,
        2000,
    )
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
    assert (
        sum(x["rules_drift_rows"] for x in d) == 2 and sum(x["unpriced"] for x in d) == 5
    )  # + the private, clamped, flagged
    writes = [x["cache_write_tokens"] for x, r in zip(d, records) if r.model and r.model.startswith("gpt-")]
    assert 3000 in writes and 2000 in writes  # OpenAI writes count like Anthropic's
    priced_56 = next(r for r in records if r.model == "gpt-5.6-terra" and not r.flags)
    assert priced_56.cost_breakdown.cache_write_usd == 3000 * 2.5 / 1e6
