"""proxy.accounting.fleet_rows: the fleet's sums capped and shaped like the stats."""

from __future__ import annotations

from proxy.accounting.counters import COUNTERS, INDEX
from proxy.accounting.fleet_redis import to_ints
from proxy.accounting.fleet_rows import capped, shape, total


def row(requests: int, cost_usd: float = 0.0, billable: int = 0) -> list[int]:
    values: list[float | int] = [0] * len(COUNTERS)
    values[INDEX["requests"]] = requests
    values[INDEX["billable"]] = billable
    values[INDEX["cost_usd"]] = cost_usd
    values[INDEX["priced"]] = billable
    return to_ints(values)


def test_total_sums_every_row():
    rows = {("openai", "a"): row(2, 0.5, 2), ("anthropic", "b"): row(3, 0.25, 3)}
    sums = total(rows)
    assert sums[INDEX["requests"]] == 5 and sums[INDEX["cost_usd"]] == 750_000_000


def test_capped_keeps_the_most_requested_and_folds_the_rest_per_provider():
    rows = {
        ("openai", "a"): row(5),
        ("openai", "b"): row(1),
        ("openai", "c"): row(2),
        ("anthropic", "d"): row(1),
    }
    out = capped(rows, 2)
    assert set(out) == {("openai", "a"), ("openai", "c"), ("openai", "other"), ("anthropic", "other")}
    assert out[("openai", "other")][INDEX["requests"]] == 1
    assert sum(r[INDEX["requests"]] for r in out.values()) == 9
    assert capped(rows, 4) is rows


def test_shape_lists_only_billable_models_most_requests_first():
    rows = {("openai", ""): row(7), ("openai", "a"): row(2, 0.5, 2), ("openai", "b"): row(3, 0.25, 3)}
    out = shape(rows)
    assert out["requests"] == 12 and out["cost_usd"] == 0.75
    assert [m["model"] for m in out["models"]] == ["b", "a"]
    assert out["providers"]["openai"]["requests"] == 12
