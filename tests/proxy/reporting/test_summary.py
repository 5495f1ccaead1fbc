from __future__ import annotations

import pytest

from analyzer.usage import Usage
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.reporting.summary import summarize
from tests.support.request_records import T0, records, write


def test_totals_equal_stats_for_the_same_records(tmp_path):
    path = str(tmp_path / "l.sqlite")
    recs = records()
    write(path, recs)
    stats = Stats()
    for r in recs:
        stats.handle(r)
    import sqlite3

    s = summarize(sqlite3.connect(path))
    want = stats.to_json()
    for key in (
        "requests",
        "prefix_hits",
        "input_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "output_tokens",
        "unanalysed",
        "errors",
        "unpriced",
    ):
        assert s[key] == want[key], key
    for key in ("cost_usd", "saved_usd", "missed_usd"):
        assert abs(s[key] - want[key]) < 1e-9, key
    for m in s["models"]:
        other = next(x for x in want["models"] if x["provider"] == m["provider"] and x["model"] == m["model"])
        assert m["requests"] == other["requests"]
        if other["cost_usd"] is None:  # a model with no price: null in both, never $0
            assert m["cost_usd"] is None
        else:
            assert abs(m["cost_usd"] - other["cost_usd"]) < 1e-9
    assert any(m["cost_usd"] is None for m in s["models"])
    assert s["requests"] == 14 and s["unpriced"] == 1 and s["errors"] == 1


def test_series_prefixes_reasons_and_range(tmp_path):
    import sqlite3

    path = str(tmp_path / "l.sqlite")
    write(path, records())
    conn = sqlite3.connect(path)
    s = summarize(conn, since=T0, until=T0 + 7200, buckets=4)
    # the requests span T0 .. T0 + 6600 s; 30-minute buckets from the half hour before T0 need 5,
    # so hours (UTC-aligned: the first starts 800 s before T0)
    assert (s["series"]["step"], s["series"]["start"]) == (3600, T0 - 800)
    assert [p["requests"] for p in s["series"]["points"]] == [7, 6, 1]
    assert sum(p["cost_usd"] for p in s["series"]["points"]) == pytest.approx(s["cost_usd"])
    assert s["requests"] == 14
    top = s["top_prefixes"][0]
    assert top["fingerprint"] == "aa" * 8 and top["count"] == 8 and top["tokens"] == 1100
    assert top["repeated_tokens"] == 8 * 1100 and top["preview"] is None  # bodies not logged
    assert s["miss_reasons"] == [
        {"reason": "volatile-time", "count": 4, "missed_usd": pytest.approx(0.00028)}
    ]
    later = summarize(conn, since=T0 + 3600)
    assert later["requests"] == 6


def test_preview_only_with_logged_bodies(tmp_path):
    import sqlite3

    path = str(tmp_path / "l.sqlite")
    write(path, records(), log_bodies=True)
    top = summarize(sqlite3.connect(path))["top_prefixes"][0]
    assert "You are terse." in top["preview"]


def test_unknown_prefixes_agree_with_stats_and_stay_out_of_the_hit_rate(tmp_path):
    import sqlite3

    path = str(tmp_path / "l.sqlite")
    recs = [
        RequestRecord(
            f"k{i}",
            T0 + i,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-4o-mini",
            status=200,
            analysed=True,
            prefix_segments=seg,
            prefix_bytes=None if seg is None else 10 * seg,
            total_segments=2,
        )
        for i, seg in enumerate([1, 0, None, None])
    ]
    write(path, recs)
    rows = (
        sqlite3.connect(path)
        .execute("SELECT prefix_segments, prefix_bytes FROM requests ORDER BY ts")
        .fetchall()
    )
    assert rows == [(1, 10), (0, 0), (None, None), (None, None)]  # NULL, never 0
    stats = Stats()
    for r in recs:
        stats.handle(r)
    s = summarize(sqlite3.connect(path))
    assert (
        (s["prefix_hits"], s["prefix_unknown"])
        == (stats.to_json()["prefix_hits"], stats.to_json()["prefix_unknown"])
        == (1, 2)
    )
    assert s["request_hit_rate"] == 0.5  # one hit of the two requests whose prefix is known
    assert s["top_prefixes"][0]["count"] == 1


def test_every_counter_and_the_rewrites_agree_with_stats(tmp_path):
    import sqlite3

    from proxy.accounting.counters import COUNTERS
    from tests.support.request_records import variety

    path = str(tmp_path / "l.sqlite")
    recs = records() + variety()
    write(path, recs)
    stats = Stats()
    for r in recs:
        stats.handle(r)
    want, s = stats.to_json(), summarize(sqlite3.connect(path))
    for c in (c for c in COUNTERS if c.shown):
        if c.kind == "usd":
            assert s[c.name] == pytest.approx(want[c.name], abs=1e-9), c.name
        else:
            assert s[c.name] == want[c.name], c.name
    assert (
        s["rewrites"] == want["rewrites"] == {"add-breakpoints": 5, "cap-breakpoints": 2, "skipped-error": 1}
    )
    assert list(s["rewrites"]) == list(want["rewrites"])  # the same order: most first
    assert s["rewritten"] == want["rewritten"] == 5  # the skipped-error request was not changed
    for name, block in want["providers"].items():
        assert s["providers"][name]["rewrites"] == block["rewrites"], name
        assert s["providers"][name]["rewritten"] == block["rewritten"], name
    by_model = {(m["provider"], m["model"]): m["rewritten"] for m in s["models"]}
    assert by_model == {(m["provider"], m["model"]): m["rewritten"] for m in want["models"]}


def test_rewrites_in_a_range_and_rows_without_a_readable_list(tmp_path):
    import sqlite3

    path = str(tmp_path / "l.sqlite")
    write(path, records())
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE requests SET rewrites = NULL WHERE request_id = 'r1'"
    )  # a row from before the column
    conn.execute(
        "UPDATE requests SET rewrites = 'add-breakpoints' WHERE request_id = 'r9'"
    )  # not JSON: skipped
    conn.commit()
    s = summarize(conn)
    assert s["rewrites"] == {"add-breakpoints": 1, "cap-breakpoints": 1} and s["rewritten"] == 1  # r5 alone
    later = summarize(conn, since=T0 + 3000)  # r5 onwards
    assert later["rewrites"] == {"add-breakpoints": 1, "cap-breakpoints": 1} and later["requests"] == 7
    assert (
        summarize(conn, since=T0 + 3600)["rewrites"] == {}
        and summarize(conn, since=T0 + 3600)["rewritten"] == 0
    )


def test_rewrite_ids_in_the_summary_are_capped(tmp_path):
    import sqlite3

    from proxy.reporting.summary import _rewrites

    path = str(tmp_path / "l.sqlite")
    recs = [
        RequestRecord(f"x{i}", T0 + i, "t", "openai", "/v1/chat/completions", status=200, rewrites=ids)
        for i, ids in enumerate([["a", "b"], ["a"], ["c"], ["d"], ["a", "c"]])
    ]
    write(path, recs)
    total, per_provider = _rewrites(sqlite3.connect(path), "", [], limit=2)
    assert total == {"a": 3, "c": 2, "other": 2} and per_provider == {"openai": total}


def test_one_minute_of_traffic_in_a_day_range_is_a_curve_not_a_bar(tmp_path):
    import sqlite3
    import time

    now = time.time()
    recs = [
        RequestRecord(
            f"m{i}",
            now - 60 + i * 3,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-4o-mini",
            status=200,
            analysed=True,
            usage=Usage(2000, 1024 * (i % 2), 0, 0, 10),
            cost_usd=0.001,
        )
        for i in range(20)
    ]
    path = str(tmp_path / "l.sqlite")
    write(path, recs)
    series = summarize(sqlite3.connect(path), since=now - 86400, buckets=36)["series"]
    assert (
        series["step"] == 2
    )  # 57 s of requests in 2-second buckets (5 s would be 12 buckets: 2 s is the smallest that fits 36)
    assert sum(1 for p in series["points"] if p["requests"]) >= 15
    assert len(series["points"]) <= 36 and sum(p["requests"] for p in series["points"]) == 20


def test_model_lists_and_probes_are_not_model_rows(tmp_path):
    import sqlite3

    recs = (
        records()
        + [
            RequestRecord(f"g{i}", T0 + 50 + i, "t", "openai", "/v1/models", method="GET", status=200)
            for i in range(3)
        ]
        + [RequestRecord("p", T0 + 60, "t", "openai", "/v1/chat/completions", model="m", status=404)]
    )
    path = str(tmp_path / "l.sqlite")
    write(path, recs)
    s = summarize(sqlite3.connect(path))
    assert {m["model"] for m in s["models"]} == {"gpt-4o-mini", "private"}
    assert s["not_billable"] == [
        {"method": "GET", "route": "/v1/models", "requests": 3, "errors": 0, "models": []},
        {
            "method": "POST",
            "route": "/v1/chat/completions",
            "requests": 2,
            "errors": 2,
            "models": ["m"],
        },  # "e" (502, no model) and the probe
    ]
    stats = Stats()
    for r in recs:
        stats.handle(r)
    assert stats.to_json()["not_billable"] == s["not_billable"] and s["requests"] == 18


def test_a_miss_reason_whose_rows_were_all_unpriced_shows_unknown_money(tmp_path):
    """Money is exact or null: a reason seen only on rows priced null (an unpriced model, rules
    drift) missed an unknown amount, not $0.00; one priced row makes it a sum again."""
    import sqlite3

    from proxy.reporting.report_tables import render_table

    def row(rid: str, reason: str, missed: float | None, **kw) -> RequestRecord:
        return RequestRecord(
            rid,
            T0,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-4o-mini",
            status=200,
            analysed=True,
            usage=Usage(2000, 0, 0, 0, 5),
            miss_reason=reason,
            missed_usd=missed,
            **kw,
        )

    path = str(tmp_path / "l.sqlite")
    write(
        path,
        [
            row("a", "not-cached", None),
            row("b", "not-cached", None, drift=["cache_x:unknown_field"]),
            row("c", "volatile-time; path=messages[0]; offset=9", None),
            row("d", "volatile-time; path=messages[0]; offset=9", 0.00007, cost_usd=0.0003, saved_usd=0.0),
        ],
    )
    s = summarize(sqlite3.connect(path))
    reasons = {r["reason"]: r for r in s["miss_reasons"]}
    assert reasons["not-cached"] == {"reason": "not-cached", "count": 2, "missed_usd": None}
    assert reasons["volatile-time"]["missed_usd"] == pytest.approx(0.00007)
    text = render_table(s, width=120)
    line = next(l for l in text.splitlines() if "not-cached" in l)
    assert "$0.00" not in line and "—" in line
