"""proxy.accounting.stats: totals, per provider, per model."""

from __future__ import annotations

from analyzer.usage import Usage
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats

KEYS = {
    "requests",
    "prefix_hits",
    "input_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "output_tokens",
    "unanalysed",
    "errors",
}


def rec(provider="openai", model="gpt-4o", **kw) -> RequestRecord:
    return RequestRecord("id", 0.0, "t", provider, "/v1/x", model=model, **kw)


def test_counts_add_up_per_provider_and_model():
    stats = Stats()
    stats.handle(rec(status=200, analysed=True, usage=Usage(2000, 1024, 0, 0, 10), prefix_segments=2))
    stats.handle(rec(status=200, analysed=False))
    stats.handle(rec("anthropic", "claude", status=200, analysed=True, usage=Usage(1500, 1000, 400, 0, 5)))
    stats.handle(rec("anthropic", "claude", status=502, analysed=True, error="upstream_unreachable"))
    out = stats.to_json()
    assert KEYS <= out.keys()
    assert {k: out[k] for k in KEYS} == {
        "requests": 4,
        "prefix_hits": 1,
        "input_tokens": 3500,
        "cached_tokens": 2024,
        "cache_write_tokens": 400,
        "output_tokens": 15,
        "unanalysed": 1,
        "errors": 1,
    }
    assert out["providers"]["openai"]["requests"] == 2 and out["providers"]["anthropic"]["errors"] == 1
    rows = {(m["provider"], m["model"]): m for m in out["models"]}
    assert rows[("anthropic", "claude")]["cache_write_tokens"] == 400
    assert rows[("openai", "gpt-4o")]["cached_tokens"] == 1024
    assert out["unpriced"] == 2  # usage without a price


def test_money_fields_sum_what_the_money_layer_set():
    stats = Stats()
    stats.handle(rec(status=200, usage=Usage(10, 0, 0, 0, 1), cost_usd=0.25, saved_usd=0.5, missed_usd=0.125))
    stats.handle(rec(status=200, usage=Usage(10, 0, 0, 0, 1), cost_usd=0.25))
    out = stats.to_json()
    assert (out["cost_usd"], out["saved_usd"], out["missed_usd"], out["unpriced"]) == (0.5, 0.5, 0.125, 0)


def test_a_model_with_no_price_has_null_money_never_zero():
    stats = Stats()
    unpriced = rec(model="private", usage=Usage(100, 0, 0, 0, 5))
    priced = rec(model="gpt-4o", usage=Usage(100, 0, 0, 0, 5))
    priced.cost_usd, priced.saved_usd, priced.missed_usd = 0.001, 0.0, 0.0
    stats.handle(unpriced)
    stats.handle(priced)
    out = stats.to_json()
    by_model = {m["model"]: m for m in out["models"]}
    assert by_model["private"]["cost_usd"] is None and by_model["private"]["unpriced"] == 1
    assert by_model["gpt-4o"]["cost_usd"] == 0.001
    assert out["cost_usd"] == 0.001 and out["unpriced"] == 1  # the total sums what is priced
    assert "priced" not in out


def test_model_rows_are_capped_and_the_rest_counted_as_other():
    # Before: one row per distinct client-sent model name, without bound (memory and JSON).
    stats = Stats(max_models=2)
    for name in ("a", "b", "c", "d", "c"):
        stats.handle(rec(model=name, status=200, usage=Usage(10, 0, 0, 0, 1)))
    out = stats.to_json()
    rows = {m["model"]: (m["requests"], m["input_tokens"]) for m in out["models"]}
    assert rows == {"a": (1, 10), "b": (1, 10), "other": (3, 30)}
    assert (out["requests"], out["input_tokens"]) == (5, 50)


def test_unknown_prefix_is_neither_a_hit_nor_a_miss():
    stats = Stats()
    stats.handle(rec(status=200, analysed=True, prefix_segments=None, prefix_bytes=None))
    stats.handle(rec(status=200, analysed=True, prefix_segments=2))
    stats.handle(rec(status=200, analysed=True, prefix_segments=0))
    out = stats.to_json()
    assert (out["requests"], out["prefix_hits"], out["prefix_unknown"]) == (3, 1, 1)


def test_rewrites_are_counted_per_id_in_total_and_per_provider():
    stats = Stats()
    u = Usage(10, 0, 0, 0, 1)
    stats.handle(
        rec("anthropic", "claude", status=200, usage=u, rewrites=["add-breakpoints", "cap-breakpoints"])
    )
    stats.handle(rec("anthropic", "claude", status=200, usage=u, rewrites=["add-breakpoints"]))
    stats.handle(rec("openai", "gpt-4o", status=200, usage=u, rewrites=["prompt-cache-key"]))
    stats.handle(rec("openai", "gpt-4o", status=200, usage=u))
    out = stats.to_json()
    assert out["rewrites"] == {"add-breakpoints": 2, "cap-breakpoints": 1, "prompt-cache-key": 1}
    assert list(out["rewrites"]) == [
        "add-breakpoints",
        "cap-breakpoints",
        "prompt-cache-key",
    ]  # most first, then by name
    assert out["rewritten"] == 3
    assert out["providers"]["anthropic"]["rewrites"] == {"add-breakpoints": 2, "cap-breakpoints": 1}
    assert out["providers"]["openai"]["rewrites"] == {"prompt-cache-key": 1}
    assert out["providers"]["openai"]["rewritten"] == 1
    rows = {m["model"]: m for m in out["models"]}
    assert rows["claude"]["rewritten"] == 2 and "rewrites" not in rows["claude"]


def test_no_rewrite_gives_an_empty_map_and_zero():
    stats = Stats()
    stats.handle(rec(status=200))
    out = stats.to_json()
    assert out["rewrites"] == {} and out["rewritten"] == 0 and out["providers"]["openai"]["rewrites"] == {}


def test_rewrite_ids_are_capped_and_the_rest_counted_as_other():
    stats = Stats(max_rewrite_ids=2)
    for ids in (["a"], ["b"], ["c"], ["d", "a"], ["c"]):
        stats.handle(rec(status=200, rewrites=ids))
    out = stats.to_json()
    assert out["rewrites"] == {"a": 2, "other": 3, "b": 1}
    assert out["rewritten"] == 5


def test_providers_add_up_their_model_rows_and_the_totals():
    stats = Stats(max_models=1)
    for provider, model in (("openai", "a"), ("openai", "b"), ("anthropic", "c"), ("anthropic", "c")):
        stats.handle(
            rec(provider, model, status=200, usage=Usage(10, 5, 0, 0, 1), cost_usd=0.5, saved_usd=0.25)
        )
    out = stats.to_json()
    assert (
        out["providers"]["openai"]["requests"] == 2 and out["providers"]["anthropic"]["cached_tokens"] == 10
    )
    assert sum(p["cost_usd"] for p in out["providers"].values()) == out["cost_usd"] == 2.0


def test_a_row_reads_and_sets_each_counter_by_name():
    stats = Stats()
    stats.handle(rec(status=200, usage=Usage(10, 0, 0, 0, 3)))
    assert stats.total.output_tokens == 3 and stats.total.requests == 1
    stats.total.output_tokens = 2**70
    assert stats.to_json()["output_tokens"] == 2**70


def test_calls_that_bill_nothing_are_grouped_apart_by_route():
    stats = Stats()
    stats.handle(rec(status=200, usage=Usage(10, 0, 0, 0, 1)))
    stats.handle(rec(status=429))  # a billing model's failure stays in its row
    for _ in range(3):
        stats.handle(RequestRecord("id", 0.0, "t", "openai", "/v1/models", method="GET", status=200))
    stats.handle(rec(model="m", status=404))  # a probe with a made-up model name
    out = stats.to_json()
    assert [(m["model"], m["requests"], m["billable"], m["errors"]) for m in out["models"]] == [
        ("gpt-4o", 2, 1, 1)
    ]
    assert out["not_billable"] == [
        {"method": "GET", "route": "/v1/models", "requests": 3, "errors": 0, "models": []},
        {"method": "POST", "route": "/v1/x", "requests": 1, "errors": 1, "models": ["m"]},
    ]
    assert out["requests"] == 6 and out["billable"] == 1  # the totals still count every request


def test_routes_of_calls_that_bill_nothing_are_capped():
    stats = Stats()
    for i in range(30):  # a scanner walking made-up paths
        stats.handle(RequestRecord("id", 0.0, "t", "openai", f"/v1/x{i:02d}", method="GET", status=404))
    rows = stats.to_json()["not_billable"]
    assert len(rows) == 20 and rows[-1] == {
        "method": "",
        "route": "other",
        "requests": 11,
        "errors": 11,
        "models": [],
    }
    assert sum(r["requests"] for r in rows) == 30
