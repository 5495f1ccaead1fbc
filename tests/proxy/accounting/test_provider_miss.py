"""proxy.accounting.provider_miss: the provider's own miss reasons per type, priced, and the agreement."""

from __future__ import annotations

import sqlite3

import pytest
from prometheus_client.parser import text_string_to_metric_families

from analyzer.usage import Usage
from proxy.accounting.ledger_schema import INSERT, SCHEMA, row_for
from proxy.accounting.metrics import Metrics
from proxy.accounting.provider_miss import NONE, ProviderMisses, agrees, as_provider_type, code_of
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.reporting.report_tables import render_table
from proxy.reporting.summary import summarize

T0 = 1_800_000_000.0


@pytest.mark.parametrize(
    "ours, theirs",
    [
        ("model-changed", "model_changed"),
        ("tools-changed; path=tools[1]; offset=40", "tools_changed"),
        ("tool-order; path=tools[0]", "tools_changed"),
        ("json-key-order; path=tools[2]; offset=9", "tools_changed"),
        ("json-key-order", "tools_changed"),
        ("json-key-order; path=system[0]; offset=3", "system_changed"),
        ("system-changed; path=system[0]; offset=12", "system_changed"),
        ("volatile-time; path=system[0]; offset=14", "system_changed"),
        ("volatile-uuid; path=system; offset=2", "system_changed"),
        ("volatile-date; path=messages[2]; offset=30", "messages_changed"),
        ("volatile-request-id; path=tools[0]; offset=8", "tools_changed"),
        ("volatile-time; path=instructions; offset=1", "system_changed"),
        ("volatile-time", None),  # where it sits is unknown
        ("ttl-expired", None),
        ("not-cached", None),
        ("below-minimum", None),
        ("no-cache-breakpoint", None),
        ("schema-changed; path=output_format", None),
        (None, None),
        ("", None),
    ],
)
def test_the_mapping_is_one_table(ours, theirs):
    assert as_provider_type(ours) == theirs
    if theirs is not None:
        assert agrees(theirs, ours)
    assert not agrees("previous_message_not_found", ours) and not agrees("unavailable", ours)
    assert not agrees(None, ours)


def test_code_of_is_the_first_word():
    assert code_of("volatile-time; path=system[0]; offset=1") == "volatile-time" and code_of(None) is None


def rec(
    i: int,
    reason: str | None,
    tokens: int | None,
    usd: float | None,
    ours: str | None,
    provider: str = "anthropic",
) -> RequestRecord:
    return RequestRecord(
        f"p{i}",
        T0 + i,
        "t",
        provider,
        "/v1/messages",
        model="claude-sonnet-4-6",
        status=200,
        analysed=True,
        usage=Usage(5000, 0, 0, 0, 5),
        cost_usd=0.015,
        saved_usd=0.0,
        missed_usd=0.0,
        miss_reason=ours,
        provider_miss_reason=reason,
        provider_missed_tokens=tokens,
        provider_missed_usd=usd,
    )


def records() -> list[RequestRecord]:
    # Sonnet 4.6: input $3, read $0.30 → a missed token costs $2.70 per 1M.
    return [
        rec(
            0, "system_changed", 4000, 4000 * 2.7 / 1e6, "volatile-time; path=system[0]; offset=14"
        ),  # agrees
        rec(
            1, "system_changed", 2000, 2000 * 2.7 / 1e6, "system-changed; path=system[0]; offset=3"
        ),  # agrees
        rec(2, "system_changed", 1000, None, None),  # unpriced; prefixgate saw nothing
        rec(
            3, "tools_changed", 1500, 1500 * 2.7 / 1e6, "volatile-time; path=system[0]; offset=14"
        ),  # disagrees
        rec(4, "previous_message_not_found", None, None, "not-cached"),
        rec(
            5, None, None, None, "volatile-time; path=system[0]; offset=14"
        ),  # no provider reason: not counted here
    ]


def test_stats_count_per_type_with_tokens_dollars_and_agreement():
    stats = Stats()
    for r in records():
        stats.handle(r)
    out = stats.to_json()
    got = out["provider_miss_reasons"]
    assert list(got) == ["system_changed", "previous_message_not_found", "tools_changed"]
    sys = got["system_changed"]
    assert (sys["requests"], sys["missed_tokens"], sys["agrees"], sys["diagnosed"]) == (3, 7000, 2, 2)
    assert abs(sys["missed_usd"] - 6000 * 2.7 / 1e6) < 1e-12  # the unpriced one adds nothing
    assert sys["prefixgate"] == {"system-changed": 1, "volatile-time": 1, NONE: 1}
    assert got["previous_message_not_found"] == {
        "requests": 1,
        "missed_tokens": 0,
        "missed_usd": None,
        "agrees": 0,
        "diagnosed": 1,
        "prefixgate": {"not-cached": 1},
    }  # none priced: null, never $0
    assert got["tools_changed"]["agrees"] == 0
    assert out["providers"]["anthropic"]["provider_miss_reasons"] == got


def test_the_summary_counts_the_same_over_the_ledger():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    stats = Stats()
    for r in records():
        conn.execute(INSERT, row_for(r, log_bodies=False))
        stats.handle(r)
    s = summarize(conn)
    want = stats.to_json()["provider_miss_reasons"]
    assert s["provider_miss_reasons"].keys() == want.keys()
    for kind, entry in want.items():
        for key, value in entry.items():
            assert s["provider_miss_reasons"][kind][key] == (
                pytest.approx(value, abs=1e-12) if isinstance(value, float) else value
            ), (kind, key)
    assert s["providers"]["anthropic"]["provider_miss_reasons"]["system_changed"]["requests"] == 3
    text = render_table(s, width=120)
    assert (
        "provider's miss reasons" in text and "system_changed" in text and "2/3" in text and "$0.02" in text
    )


def test_types_are_capped():
    misses = ProviderMisses(limit=2)
    for kind in ("a_changed", "b_changed", "c_changed", "d_changed"):
        misses.add("anthropic", kind, 10, None, None)
    assert (
        list(misses.totals()) == ["other", "a_changed", "b_changed"]
        and misses.totals()["other"]["requests"] == 2
    )


def test_metrics_series_per_reason():
    metrics = Metrics()
    for r in records():
        metrics.handle(r)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(metrics.render().decode())
        for s in f.samples
    }
    key = (("provider", "anthropic"), ("reason", "system_changed"))
    assert samples[("prefixgate_provider_miss_total", key)] == 3
    assert samples[("prefixgate_provider_missed_tokens_total", key)] == 7000
    assert samples[("prefixgate_provider_missed_usd_total", key)] == pytest.approx(
        6000 * 2.7 / 1e6, abs=1e-12
    )
    assert samples[("prefixgate_provider_miss_agreed_total", key)] == 2
    assert (
        samples[
            (
                "prefixgate_provider_miss_total",
                (("provider", "anthropic"), ("reason", "previous_message_not_found")),
            )
        ]
        == 1
    )
