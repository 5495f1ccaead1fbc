"""Recorded provider answers replayed through a real proxy: cache writes, compaction, rules drift.

A raw-socket upstream (:mod:`tests.support.rawserver`) answers each request with one fixed,
realistic answer from ``tests/fixtures/recorded/`` (shaped by the SDKs' types, which a test
below checks): GPT-5.6 Chat Completions with ``cache_write_tokens`` and its stream (the final
``choices: []`` usage chunk), Responses with ``cache_write_tokens_details`` and its
``response.completed`` stream, ``/v1/responses/compact``, Anthropic compaction with
``usage.iterations`` plain and streamed (``message_start`` carries the compaction pass,
``message_delta`` only the final message), an unknown ``iterations`` type, an unknown cache
field, writes from a model whose price row bills none, and a ``diagnostics`` block of an
unknown shape. The official SDKs are the clients; the proxy (uvicorn, SQLite ledger) sits in
between with its default transport.

Checked: the bytes reach the client unchanged; the ledger's and ``/prefixgate/stats``' usage
and cost equal figures computed by hand from the price rows, to 1e-9; rows the rules do not
expect are null and counted (``rules_drift``, metrics, health, dashboard summary, report,
analyze), never lost.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from analyzer.logs.cli import run_analysis
from analyzer.logs.config import AnalyzeConfig
from analyzer.pricing import PriceTable
from proxy.app import create_app
from proxy.cli import cli
from proxy.config import ProxyConfig
from tests.support.rawserver import RawRequest, RawServer, Reply
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"
PRICES = PriceTable.load()
TOL = 1e-9
LONG = "Policy: refunds within 30 days; invoices are due 14 days after issue; be polite and precise. " * 60


def fixture(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


def reply_for(name: str) -> Reply:
    """The recorded answer as an HTTP/1.1 response: JSON with a Content-Length, SSE chunked,
    one chunk per event with a short pause (a real stream arrives in pieces)."""
    body = fixture(name)
    if name.endswith(".json"):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        return Reply([(head + body, 0.0)])
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    pieces = [(head, 0.0)]
    for event in body.split(b"\n\n"):
        if event:
            data = event + b"\n\n"
            pieces.append((b"%x\r\n%s\r\n" % (len(data), data), 0.003))
    pieces.append((b"0\r\n\r\n", 0.0))
    return Reply(pieces)


@dataclass
class Case:
    """One recorded answer, its request and the figures computed by hand from the price rows."""

    tag: str
    fixture: str
    model: str
    usage: tuple[int, int, int, int, int]  # input (all prompt tokens), cached, written, of which 12h, output
    cost: float | None  # None: priced null
    saved: float | None = None
    drift: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    provider_miss: str | None = None


# Rates per 1M tokens (analyzer/prices.json; test_rates_used_here_are_the_price_rows holds them equal):
#   gpt-5.6-terra $2 in / $0.20 read / $2.50 30m write / $12 out;  gpt-5.6-luna $0.20 / $0.02 / $0.25 / $1.20;
#   gpt-5.6-sol $4 / $0.40 / $5 / $20 (12h unpublished);  gpt-6.2-sol $2 / $0.10 / $2.50 30m / $5 12h / $10;
#   claude-sonnet-4-6 $3 in / $0.30 read / $3.75 5m write / $15 out.
CASES = [
    # 952*2 + 2048*0.2 + 3000*2.5 + 400*12 = 1904 + 409.6 + 7500 + 4800 = 14613.6; uncached 6000*2 + 4800 = 16800
    Case("chat56", "openai_chat_56.json", "gpt-5.6-terra", (6000, 2048, 3000, 0, 400), 0.0146136, 0.0021864),
    # 1476*0.2 + 1024*0.02 + 2500*0.25 + 120*1.2 = 295.2 + 20.48 + 625 + 144 = 1084.68; uncached 5000*0.2 + 144 = 1144
    Case(
        "chat56-stream",
        "openai_chat_56_stream.sse",
        "gpt-5.6-luna",
        (5000, 1024, 2500, 0, 120),
        0.00108468,
        0.00005932,
    ),
    # 1000*2 + 4000*0.1 + 1000*2.5 + 4000*5 + 200*10 = 2000 + 400 + 2500 + 20000 + 2000 = 26900; uncached 20000 + 2000
    Case(
        "responses",
        "openai_responses_56.json",
        "gpt-6.2-sol",
        (10000, 4000, 5000, 4000, 200),
        0.0269,
        -0.0049,
    ),
    # 2000*4 + 6000*5 + 50*20 = 8000 + 30000 + 1000 = 39000; uncached 8000*4 + 1000 = 33000
    Case(
        "responses-stream",
        "openai_responses_56_stream.sse",
        "gpt-5.6-sol",
        (8000, 0, 6000, 0, 50),
        0.039,
        -0.006,
    ),
    # 1808*2 + 8192*0.2 + 2000*2.5 + 900*12 = 3616 + 1638.4 + 5000 + 10800 = 21054.4; uncached 24000 + 10800 = 34800
    Case(
        "compact", "openai_compact.json", "gpt-5.6-terra", (12000, 8192, 2000, 0, 900), 0.0210544, 0.0137456
    ),
    # message 20 + 1000 read + 500 written, 300 out; compaction pass 8000 + 2000 read, 700 out:
    # 8020*3 + 3000*0.3 + 500*3.75 + 1000*15 = 24060 + 900 + 1875 + 15000 = 41835; uncached 11520*3 + 15000 = 49560
    Case(
        "compaction",
        "anthropic_compaction.json",
        "claude-sonnet-4-6",
        (11520, 3000, 500, 0, 1000),
        0.041835,
        0.007725,
    ),
    # message 30 + 4096 read, 250 out; compaction pass (message_start only) 9000 + 1200 written, 800 out:
    # 9030*3 + 4096*0.3 + 1200*3.75 + 1050*15 = 27090 + 1228.8 + 4500 + 15750 = 48568.8; uncached 14326*3 + 15750 = 58728
    Case(
        "compaction-stream",
        "anthropic_compaction_stream.sse",
        "claude-sonnet-4-6",
        (14326, 4096, 1200, 0, 1050),
        0.0485688,
        0.0101592,
    ),
    Case(
        "unknown-iteration",
        "anthropic_unknown_iteration.json",
        "claude-sonnet-4-6",
        (50, 0, 0, 0, 10),
        None,
        drift=["iterations[speculative_draft]:unknown_type"],
    ),
    Case(
        "unknown-field",
        "openai_chat_unknown_cache_field.json",
        "gpt-5.6-terra",
        (3000, 0, 1000, 0, 20),
        None,
        drift=["prompt_tokens_details.cache_refresh_tokens:unknown_field"],
    ),
    Case(
        "old-writes",
        "openai_chat_55_writes.json",
        "gpt-5.5",
        (3000, 0, 2000, 0, 5),
        None,
        drift=["cache_write_tokens:not_billed_by_price_row"],
    ),
    # the request marks a 12h breakpoint; Chat usage has no TTL split: null and flagged, not drift
    Case(
        "chat56-12h",
        "openai_chat_56.json",
        "gpt-5.6-terra",
        (6000, 2048, 3000, 0, 400),
        None,
        flags=["cache_write_tokens:ttl_split_unknown"],
    ),
    # a diagnostics block of an unknown shape: ignored for money, the row kept and priced as usual
    # 100*3 + 2048*0.3 + 12*15 = 300 + 614.4 + 180 = 1094.4; uncached 2148*3 + 180 = 6624
    Case(
        "odd-diagnostics",
        "anthropic_odd_diagnostics.json",
        "claude-sonnet-4-6",
        (2148, 2048, 0, 0, 12),
        0.0010944,
        0.0055296,
        provider_miss="unknown_shape",
    ),
]
BY_TAG = {c.tag: c for c in CASES}


def test_rates_used_here_are_the_price_rows():
    rates = {
        m: PRICES.lookup(m)
        for m in ("gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.6-sol", "gpt-6.2-sol", "claude-sonnet-4-6")
    }
    got = {
        m: (p.input, p.read_rate, p.short_write_rate, p.write_12h_rate, p.output) for m, p in rates.items()
    }
    assert got == {
        "gpt-5.6-terra": (2.0, 0.2, 2.5, None, 12.0),
        "gpt-5.6-luna": (0.2, 0.02, 0.25, None, 1.2),
        "gpt-5.6-sol": (4.0, 0.4, 5.0, None, 20.0),
        "gpt-6.2-sol": (2.0, 0.1, 2.5, 5.0, 10.0),
        "claude-sonnet-4-6": (3.0, 0.3, 3.75, None, 15.0),
    }
    assert not PRICES.lookup("gpt-5.5").bills_writes


def _events(name: str) -> list[dict]:
    return [
        json.loads(line[6:])
        for line in fixture(name).decode().splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def test_the_recordings_are_shaped_by_the_sdk_types():
    from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.responses import CompactedResponse, Response, ResponseStreamEvent
    from pydantic import TypeAdapter

    for name in ("openai_chat_56.json", "openai_chat_unknown_cache_field.json", "openai_chat_55_writes.json"):
        ChatCompletion.model_validate_json(fixture(name))
    chunks = [ChatCompletionChunk.model_validate(c) for c in _events("openai_chat_56_stream.sse")]
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens_details.cache_write_tokens == 2500
    resp = Response.model_validate_json(fixture("openai_responses_56.json"))
    assert resp.usage.input_tokens_details.cache_write_tokens_details.ttl_12h_tokens == 4000
    events = [
        TypeAdapter(ResponseStreamEvent).validate_python(e) for e in _events("openai_responses_56_stream.sse")
    ]
    assert (
        events[-1].type == "response.completed"
        and events[-1].response.usage.input_tokens_details.cache_write_tokens == 6000
    )
    assert (
        CompactedResponse.model_validate_json(
            fixture("openai_compact.json")
        ).usage.input_tokens_details.cache_write_tokens
        == 2000
    )
    message = BetaMessage.model_validate_json(fixture("anthropic_compaction.json"))
    assert [i.type for i in message.usage.iterations] == ["compaction", "message"]
    stream = [
        TypeAdapter(BetaRawMessageStreamEvent).validate_python(e)
        for e in _events("anthropic_compaction_stream.sse")
        if e["type"] != "ping"
    ]  # ping: not in the SDK's union
    assert [i.type for i in stream[0].message.usage.iterations] == ["compaction"]
    assert [i.type for i in stream[-2].usage.iterations] == ["message"]
    # (anthropic_unknown_iteration.json and anthropic_odd_diagnostics.json are off the SDK's shapes on purpose)


def _ask(oa: openai.OpenAI, an: anthropic.Anthropic, case: Case) -> tuple[bytes, str]:
    """One request through the proxy with the SDK: (the body bytes the client got, the request id)."""
    q = {"tag": case.tag}
    system = [{"type": "text", "text": LONG}]
    if case.tag == "chat56-12h":
        system = [
            {"type": "text", "text": LONG, "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "12h"}}
        ]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "When is my invoice due?"}]
    if case.fixture.startswith("openai_chat") and not case.fixture.endswith(".sse"):
        raw = oa.chat.completions.with_raw_response.create(model=case.model, messages=messages, extra_query=q)
        parsed = raw.parse()
        assert (
            parsed.usage.prompt_tokens == case.usage[0]
            and parsed.usage.prompt_tokens_details.cache_write_tokens == case.usage[2]
        )
        return raw.http_response.content, raw.headers["x-prefixgate-request-id"]
    if case.tag == "chat56-stream":
        with oa.chat.completions.with_streaming_response.create(
            model=case.model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            extra_query=q,
        ) as r:
            return b"".join(r.iter_bytes()), r.headers["x-prefixgate-request-id"]
    if case.tag == "responses":
        raw = oa.responses.with_raw_response.create(
            model=case.model, instructions=LONG, input="Refund policy?", extra_query=q
        )
        assert (
            raw.parse().usage.input_tokens_details.cache_write_tokens_details.ttl_12h_tokens == case.usage[3]
        )
        return raw.http_response.content, raw.headers["x-prefixgate-request-id"]
    if case.tag == "responses-stream":
        with oa.responses.with_streaming_response.create(
            model=case.model, instructions=LONG, input="Refund policy?", stream=True, extra_query=q
        ) as r:
            return b"".join(r.iter_bytes()), r.headers["x-prefixgate-request-id"]
    if case.tag == "compact":
        raw = oa.responses.with_raw_response.compact(
            model=case.model, input=[{"role": "user", "content": LONG}], extra_query=q
        )
        assert raw.parse().usage.input_tokens_details.cache_write_tokens == case.usage[2]
        return raw.http_response.content, raw.headers["x-prefixgate-request-id"]
    body = dict(
        model=case.model,
        max_tokens=512,
        system=[{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "Summarise my open tickets."}],
        extra_query=q,
        betas=["compact-2026-01-12"],
    )
    if case.fixture.endswith(".sse"):
        with an.beta.messages.with_streaming_response.create(**body, stream=True) as r:
            return b"".join(r.iter_bytes()), r.headers["x-prefixgate-request-id"]
    raw = an.beta.messages.with_raw_response.create(**body)
    raw.parse()  # the SDK reads the answer (an unknown iterations type or diagnostics shape included)
    return raw.http_response.content, raw.headers["x-prefixgate-request-id"]


def _metrics(text: str) -> dict:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


def test_recorded_answers_through_the_proxy(tmp_path):
    seen: list[RawRequest] = []

    def script(request: RawRequest) -> Reply:
        seen.append(request)
        return reply_for(BY_TAG[request.tag].fixture)

    ledger = tmp_path / "ledger.sqlite"
    ids: dict[str, str] = {}
    with RawServer(script) as upstream:
        config = ProxyConfig(
            openai_base=upstream.url + "/v1",
            anthropic_base=upstream.url,
            ledger=str(ledger),
            state_dir=tmp_path / "state",
        )
        with serve(create_app(config)) as proxy:
            oa = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-recorded-KEY", max_retries=0)
            an = anthropic.Anthropic(base_url=proxy, api_key="sk-ant-recorded-KEY", max_retries=0)
            for case in CASES:
                got, ids[case.tag] = _ask(oa, an, case)
                assert got == fixture(case.fixture), case.tag  # byte for byte
            stats = httpx.get(f"{proxy}/prefixgate/stats", timeout=10).json()
            health = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
            metrics = _metrics(httpx.get(f"{proxy}/prefixgate/metrics", timeout=10).text)
            summary = httpx.get(f"{proxy}/prefixgate/api/summary?since=all", timeout=10).json()
    assert [r.tag for r in seen] == [c.tag for c in CASES]  # one upstream call each
    assert any(r.target.startswith(b"/v1/responses/compact") for r in seen)

    # the ledger: one row per request, usage and money exactly as computed by hand
    db = sqlite3.connect(ledger)
    db.row_factory = sqlite3.Row
    rows = {r["request_id"]: r for r in db.execute("SELECT * FROM requests")}
    assert len(rows) == len(CASES)
    for case in CASES:
        row = rows[ids[case.tag]]
        usage = (
            row["input_tokens"],
            row["cached_tokens"],
            row["cache_write_tokens"],
            row["cache_write_12h_tokens"],
            row["output_tokens"],
        )
        assert usage == case.usage, case.tag
        assert row["model"] == case.model and row["status"] == 200
        if case.cost is None:
            assert (
                row["cost_usd"] is None and row["saved_usd"] is None and row["cost_cache_write_usd"] is None
            ), case.tag
        else:
            assert abs(row["cost_usd"] - case.cost) < TOL, (case.tag, row["cost_usd"])
            assert abs(row["saved_usd"] - case.saved) < TOL, (case.tag, row["saved_usd"])
            parts = (
                row["cost_input_usd"]
                + row["cost_cache_read_usd"]
                + row["cost_cache_write_usd"]
                + row["cost_output_usd"]
            )
            assert abs(parts - case.cost) < TOL, case.tag
        assert row["drift"] == (",".join(case.drift) or None), case.tag
        assert row["flags"] == (",".join(case.flags) or None), case.tag
        assert row["provider_miss_reason"] == case.provider_miss and row["provider_missed_usd"] is None, (
            case.tag
        )
    # OpenAI writes land in the cost breakdown's write column, as Anthropic's do: 3000*2.5 + 2500*0.25 + …
    chat = rows[ids["chat56"]]
    assert (
        abs(chat["cost_cache_write_usd"] - 0.0075) < TOL
        and abs(rows[ids["responses"]]["cost_cache_write_usd"] - 0.0225) < TOL
    )

    # /prefixgate/stats: the same sums, drift counted per field, OpenAI writes counted like Anthropic's
    priced = [c for c in CASES if c.cost is not None]
    assert stats["requests"] == len(CASES) and stats["unpriced"] == len(CASES) - len(priced)
    assert abs(stats["cost_usd"] - sum(c.cost for c in priced)) < TOL
    assert abs(stats["saved_usd"] - sum(c.saved for c in priced)) < TOL
    assert stats["cache_write_tokens"] == sum(c.usage[2] for c in CASES)
    by_provider = stats["providers"]
    assert by_provider["openai"]["cache_write_tokens"] == sum(
        c.usage[2] for c in CASES if not c.model.startswith("claude")
    )
    models = {m["model"]: m for m in stats["models"]}
    assert models["gpt-5.6-terra"]["cache_write_tokens"] == 3000 + 2000 + 1000 + 3000
    assert abs(models["gpt-6.2-sol"]["cost_usd"] - 0.0269) < TOL
    assert models["gpt-5.5"]["cost_usd"] is None and models["gpt-5.5"]["rules_drift_rows"] == 1
    assert stats["rules_drift_rows"] == 3
    drift = {(r["provider"], r["model"], r["field"], r["why"]): r for r in stats["rules_drift"]}
    assert set(drift) == {
        ("anthropic", "claude-sonnet-4-6", "iterations[speculative_draft]", "unknown_type"),
        ("openai", "gpt-5.6-terra", "prompt_tokens_details.cache_refresh_tokens", "unknown_field"),
        ("openai", "gpt-5.5", "cache_write_tokens", "not_billed_by_price_row"),
    }
    assert all(r["count"] == 1 and r["first_seen"] <= r["last_seen"] for r in drift.values())
    assert stats["provider_miss_reasons"]["unknown_shape"]["requests"] == 1

    # metrics, health, the dashboard's summary: the same drift
    assert (
        metrics[
            (
                "prefixgate_rules_drift_total",
                (
                    ("field", "cache_write_tokens"),
                    ("model", "gpt-5.5"),
                    ("provider", "openai"),
                    ("why", "not_billed_by_price_row"),
                ),
            )
        ]
        == 1
    )
    assert (
        metrics[
            (
                "prefixgate_tokens_total",
                (("kind", "cache_write"), ("model", "gpt-5.6-terra"), ("provider", "openai")),
            )
        ]
        == 9000
    )
    assert (
        abs(
            metrics[("prefixgate_cost_usd_total", (("model", "gpt-6.2-sol"), ("provider", "openai")))]
            - 0.0269
        )
        < TOL
    )
    assert health.status_code == 200 and health.json()["status"] == "ok"
    warnings = health.json()["warnings"]
    assert len(warnings) == 3 and any(
        "usage of gpt-5.5 (openai) reports cache_write_tokens" in w and "--prices" in w for w in warnings
    )
    assert summary["rules_drift"] == stats["rules_drift"] and summary["rules_drift_rows"] == 3
    assert abs(summary["cost_usd"] - stats["cost_usd"]) < TOL
    assert sum(p["cache_write_usd"] for p in summary["series"]["points"]) == pytest.approx(
        sum(r["cost_cache_write_usd"] or 0.0 for r in rows.values()), abs=TOL
    )

    # report and analyze over the ledger: the same money, the drift named
    report = json.loads(CliRunner().invoke(cli, ["report", "--ledger", str(ledger), "--json"]).output)
    assert abs(report["cost_usd"] - stats["cost_usd"]) < TOL and report["rules_drift_rows"] == 3
    text = CliRunner().invoke(cli, ["report", "--ledger", str(ledger)]).output
    assert "rules drift" in text and "gpt-5.5" in text
    analysed, errors = run_analysis([str(ledger)], AnalyzeConfig(prices=PRICES))
    assert errors == [] and abs(analysed["money"]["spent_usd"] - stats["cost_usd"]) < TOL
    assert analysed["rules_drift"]["requests"] == 3 and analysed["money"]["flagged_requests"] == 1

    for f in tmp_path.rglob("*"):  # and no key anywhere
        if f.is_file():
            assert b"recorded-KEY" not in f.read_bytes(), f
