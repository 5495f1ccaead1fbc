"""proxy.accounting.drift: the rules-drift table in stats, summary, metrics, report and health."""

from __future__ import annotations

import sqlite3

import httpx
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from analyzer.usage import Usage
from proxy.accounting.drift import MAX_DRIFT_ROWS, PRICES_OR_RULES, DriftTable, from_ledger, split, update_for
from proxy.accounting.ledger_schema import INSERT, SCHEMA, row_for
from proxy.accounting.metrics import Metrics
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.reporting.summary import summarize

T0 = 1_800_000_000.0
WRITES = "cache_write_tokens:not_billed_by_price_row"
UNKNOWN = "prompt_tokens_details.cache_x:unknown_field"


def drifted(i: int, model: str, *notes: str, provider: str = "openai") -> RequestRecord:
    return RequestRecord(
        f"d{i}",
        T0 + i,
        "t",
        provider,
        "/v1/chat/completions",
        model=model,
        status=200,
        analysed=True,
        usage=Usage(3000, 0, 2000, 0, 5),
        drift=list(notes),
    )


def records() -> list[RequestRecord]:
    return [
        drifted(0, "gpt-5.5", WRITES),
        drifted(5, "gpt-5.5", WRITES, UNKNOWN),
        drifted(9, "gpt-5.5", WRITES),
        drifted(3, "claude-x", "iterations[speculative_draft]:unknown_type", provider="anthropic"),
        RequestRecord(
            "ok",
            T0 + 1,
            "t",
            "openai",
            "/v1/chat/completions",
            model="gpt-4o",
            status=200,
            usage=Usage(10, 0, 0, 0, 1),
            cost_usd=0.0001,
            saved_usd=0.0,
            missed_usd=0.0,
        ),
    ]


def test_notes_split_into_field_and_why_and_name_what_to_update():
    assert split(WRITES) == ("cache_write_tokens", "not_billed_by_price_row")
    assert split("iterations[a:b]:unknown_type") == ("iterations[a:b]", "unknown_type")
    assert split("odd") == ("odd", "")
    assert update_for("not_billed_by_price_row") == PRICES_OR_RULES and "--prices" in PRICES_OR_RULES
    assert "analyzer/cache_rules/openai.py" in PRICES_OR_RULES
    assert "analyzer/usage.py" in update_for("unknown_field") and "--prices" in update_for("something_new")


def test_stats_count_each_field_with_first_and_last_seen():
    stats = Stats()
    for r in records():
        stats.handle(r)
    out = stats.to_json()
    assert out["rules_drift_rows"] == 4 and out["unpriced"] == 4
    rows = {(r["provider"], r["model"], r["field"], r["why"]): r for r in out["rules_drift"]}
    top = rows[("openai", "gpt-5.5", "cache_write_tokens", "not_billed_by_price_row")]
    assert (top["count"], top["first_seen"], top["last_seen"]) == (3, T0, T0 + 9)
    assert top["update"] == PRICES_OR_RULES
    assert top["warning"].startswith(
        "usage of gpt-5.5 (openai) reports cache_write_tokens the rules do not expect"
    )
    assert top["warning"].endswith(PRICES_OR_RULES)
    assert rows[("openai", "gpt-5.5", "prompt_tokens_details.cache_x", "unknown_field")]["count"] == 1
    assert (
        rows[("anthropic", "claude-x", "iterations[speculative_draft]", "unknown_type")]["first_seen"]
        == T0 + 3
    )
    assert out["rules_drift"][0] is top  # most requests first
    by_model = {m["model"]: m for m in out["models"]}
    assert by_model["gpt-5.5"]["rules_drift_rows"] == 3 and by_model["gpt-4o"]["rules_drift_rows"] == 0
    assert out["providers"]["anthropic"]["rules_drift_rows"] == 1


def test_the_table_is_capped_and_the_rest_is_other():
    table = DriftTable(limit=3)
    for i in range(10):
        table.handle(drifted(i, f"model-{i}", WRITES))
    rows = table.rows()
    assert len(rows) == 4 and rows[-1]["model"] == rows[-1]["field"] == "other"
    assert rows[-1]["count"] == 7 and (rows[-1]["first_seen"], rows[-1]["last_seen"]) == (T0 + 3, T0 + 9)
    assert sum(r["count"] for r in rows) == 10
    assert MAX_DRIFT_ROWS == 100


def test_the_summary_computes_the_same_table_from_the_ledger():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    stats = Stats()
    for r in records():
        conn.execute(INSERT, row_for(r, log_bodies=False))
        stats.handle(r)
    s = summarize(conn)
    want = stats.to_json()
    assert s["rules_drift"] == want["rules_drift"] and s["rules_drift_rows"] == want["rules_drift_rows"] == 4
    assert summarize(conn, since=T0 + 4)["rules_drift"][0]["first_seen"] == T0 + 5  # the range
    capped = from_ledger(conn, "", [], limit=1)
    assert [(r["provider"], r["model"], r["count"]) for r in capped] == [
        ("openai", "gpt-5.5", 3),
        ("anthropic", "other", 1),
        ("openai", "other", 1),
    ]  # one "other" row per provider, last
    assert sum(r["count"] for r in capped) == sum(r["count"] for r in s["rules_drift"])


def test_metrics_export_each_field_and_the_rows():
    metrics = Metrics()
    for r in records():
        metrics.handle(r)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(metrics.render().decode())
        for s in f.samples
    }
    key = (
        "prefixgate_rules_drift_total",
        (
            ("field", "cache_write_tokens"),
            ("model", "gpt-5.5"),
            ("provider", "openai"),
            ("why", "not_billed_by_price_row"),
        ),
    )
    assert samples[key] == 3
    assert (
        samples[("prefixgate_rules_drift_requests_total", (("model", "gpt-5.5"), ("provider", "openai")))]
        == 3
    )
    capped = Metrics()
    capped._drift_key.limit = 1
    for i in range(3):
        capped.handle(drifted(i, f"m{i}", WRITES))
    names = {
        tuple(sorted(s.labels.items()))
        for f in text_string_to_metric_families(capped.render().decode())
        for s in f.samples
        if s.name == "prefixgate_rules_drift_total"
    }
    assert (
        len(names) == 2
        and (("field", "other"), ("model", "other"), ("provider", "openai"), ("why", "other")) in names
    )


def test_report_prints_the_drift_and_what_to_update(tmp_path):
    from proxy.reporting.report_tables import render_table, total_rows

    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    for r in records():
        conn.execute(INSERT, row_for(r, log_bodies=False))
    s = summarize(conn)
    assert dict(total_rows(s))["rules drift (priced null)"] == "4"
    text = render_table(s, width=200)
    assert (
        "rules drift" in text and "gpt-5.5" in text and "cache_write_tokens (not_billed_by_price_row)" in text
    )
    assert "iterations[speculative_draft] (unknown_type)" in text  # brackets are text, not markup
    assert "analyzer/cache_rules/openai.py" in text


def test_health_warns_and_names_what_to_update_without_failing(tmp_path):
    from proxy.app import create_app
    from proxy.config import ProxyConfig

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [],
                "usage": {
                    "prompt_tokens": 3000,
                    "completion_tokens": 5,
                    "total_tokens": 3005,
                    "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 2000},
                },
            },
        )

    config = ProxyConfig(
        openai_base="http://upstream.test/v1", ledger=str(tmp_path / "l.sqlite"), state_dir=tmp_path / "state"
    )
    with TestClient(create_app(config, transport=httpx.MockTransport(upstream))) as client:
        healthy = client.get("/prefixgate/health").json()
        assert "warnings" not in healthy and "rules_drift" not in healthy
        r = client.post(
            "/v1/chat/completions", json={"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert r.status_code == 200
        health = client.get("/prefixgate/health")
        stats = client.get("/prefixgate/stats").json()
    assert health.status_code == 200 and health.json()["status"] == "ok"  # a warning, not a failure
    body = health.json()
    assert body["warnings"] == [stats["rules_drift"][0]["warning"]]
    assert (
        "gpt-5.5" in body["warnings"][0]
        and "cache_write_tokens" in body["warnings"][0]
        and "--prices" in body["warnings"][0]
    )
    assert (
        body["rules_drift"][0]["count"] == 1 and stats["rules_drift_rows"] == 1 and stats["cost_usd"] is None
    )


def test_a_field_name_with_a_comma_is_one_note_in_memory_and_in_the_ledger():
    # Notes are comma-joined in the ledger's drift column: a key from an upstream answer that
    # holds a comma must not become two notes there while the stats count one.
    from analyzer.usage import from_openai_chat

    usage = from_openai_chat(
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 0, "cache_a,b_tokens": 3},
        }
    )
    assert len(usage.drift) == 1 and "," not in usage.drift[0]
    record = RequestRecord(
        "c0",
        T0,
        "t",
        "openai",
        "/v1/chat/completions",
        model="gpt-5.6-terra",
        status=200,
        analysed=True,
        usage=usage,
        drift=list(usage.drift),
    )
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.execute(INSERT, row_for(record, log_bodies=False))
    stats = Stats()
    stats.handle(record)
    assert summarize(conn)["rules_drift"] == stats.to_json()["rules_drift"]
