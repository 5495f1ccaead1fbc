from __future__ import annotations

from analyzer.pricing import PriceTable
from analyzer.segments import segments_for
from analyzer.usage import Usage
from proxy.accounting.money import TTL_SPLIT_UNKNOWN, Money
from proxy.accounting.records import RequestRecord
from proxy.exchange import Early, Exchange

LONG = "Policy: refunds within 30 days; be polite and precise. " * 110  # ~6 KB


def body(system: str, user: str = "hi", model: str = "gpt-4o-mini") -> dict:
    return {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


def segs(b: dict):
    return segments_for("openai", "/v1/chat/completions", b)


def rec(rid: str, usage: Usage | None, model: str = "gpt-4o-mini", prefix_segments: int = 0) -> RequestRecord:
    return RequestRecord(
        rid,
        0.0,
        "t",
        "openai",
        "/v1/chat/completions",
        model=model,
        status=200 if usage else 502,
        analysed=True,
        usage=usage,
        prefix_segments=prefix_segments,
    )


def done(record: RequestRecord, early: Early | None = None) -> Exchange:
    """The finished request as the recorder hands it to enrichers: its record and what
    ``Money.before`` saw at request time."""
    return Exchange(record, early=early)


def test_cost_and_savings_filled():
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG)), ts=0)
    r = rec("a", Usage(2006, 1920, 0, 0, 300), prefix_segments=1)
    money.enrich(done(r, a))
    assert abs(r.cost_usd - 0.0003369) < 1e-9 and abs(r.saved_usd - 0.000144) < 1e-9


def test_unknown_model_is_unpriced_never_zero():
    money = Money(PriceTable.load())
    r = rec("x", Usage(100, 0, 0, 0, 5), model="private-llm")
    money.enrich(done(r))
    assert r.cost_usd is None and r.saved_usd is None and r.missed_usd is None


def test_volatile_system_prompt_gets_a_reason_before_the_response():
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(f"Now: 2026-11-30T10:00:01Z. {LONG}")), ts=0)
    money.enrich(done(rec("a", Usage(1600, 0, 0, 0, 10)), a))
    b = money.before("t", "openai", "gpt-4o-mini", segs(body(f"Now: 2026-11-30T10:00:09Z. {LONG}")), ts=8)
    early = b.diagnosis
    assert early is not None and early.reason == "volatile-time"
    r = rec("b", Usage(1600, 0, 0, 0, 10))
    money.enrich(done(r, b))
    assert r.miss_reason.startswith("volatile-time; path=messages[0]; offset=")
    # The store saw no repeated prefix (it forked at segment 0), but the prompt is the last one
    # but for the time: the system segment is missed (analyzer.missed), 1,536 tokens at
    # 0.15 − 0.075 per 1M.
    sys_tokens = -(-len(segs(body(f"Now: 2026-11-30T10:00:09Z. {LONG}"))[0].data) // 4)
    assert 1024 + (sys_tokens - 1024) // 128 * 128 == 1536
    assert abs(r.missed_usd - 1536 * 0.075 / 1e6) < 1e-12


BILLING = "You are the billing assistant for ACME; answer in one short paragraph. " * 100


def test_worked_example_openai_timestamp_in_the_system_prompt():
    """tests/analyzer/test_missed.py's OpenAI example, through the money layer: $0.0001344."""
    money = Money(PriceTable.load())

    def ask(ts: str, question: str, at: float):
        return money.before(
            "t", "openai", "gpt-4o-mini", segs(body(f"Current time: {ts}. {BILLING}", question)), ts=at
        )

    money.enrich(
        done(rec("a", Usage(1830, 0, 0, 0, 20)), ask("2026-11-30T10:00:01Z", "What is my balance?", 0))
    )
    r = rec("b", Usage(1830, 0, 0, 0, 20))
    money.enrich(done(r, ask("2026-11-30T10:04:59Z", "When is my invoice due?", 298)))
    assert r.miss_reason.startswith("volatile-time")
    assert abs(r.missed_usd - 0.0001344) < 1e-9  # 1,792 tokens × (0.15 − 0.075) / 1M
    # the same fork after the provider's TTL (10 minutes) had passed: nothing could have been read
    late = rec("c", Usage(1830, 0, 0, 0, 20))
    money.enrich(done(late, ask("2026-11-30T10:20:00Z", "And my plan?", 298 + 601)))
    assert late.missed_usd == 0.0


def test_worked_example_anthropic_write_premium():
    """tests/analyzer/test_missed.py's Anthropic example, through the money layer: $0.0061836."""
    money = Money(PriceTable.load())

    def ask(ts: str, question: str, at: float):
        b = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 10,
            "system": [
                {
                    "type": "text",
                    "text": f"Current time: {ts}. {BILLING}",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            "messages": [{"role": "user", "content": question}],
        }
        return money.before(
            "t", "anthropic", "claude-sonnet-4-6", segments_for("anthropic", "/v1/messages", b), ts=at
        )

    def record(rid: str, usage: Usage) -> RequestRecord:
        return RequestRecord(
            rid,
            0.0,
            "t",
            "anthropic",
            "/v1/messages",
            model="claude-sonnet-4-6",
            status=200,
            analysed=True,
            usage=usage,
            prefix_segments=0,
        )

    money.enrich(
        done(record("a", Usage(1810, 0, 1790, 0, 5)), ask("2026-11-30T10:00:01Z", "What is my balance?", 0))
    )
    r = record("b", Usage(1810, 0, 1790, 0, 5))  # written again, nothing read
    money.enrich(done(r, ask("2026-11-30T10:07:30Z", "When is my invoice due?", 60)))
    assert r.miss_reason.startswith("volatile-time; path=system[0]")
    # 1,793 tokens missed: 1,790 written × (3.75 − 0.30) + 3 plain × (3.00 − 0.30) = 6,183.6 per 1M
    assert abs(r.missed_usd - 0.0061836) < 1e-9
    assert r.saved_usd < 0  # the write premium: caching cost money on this request


def test_repeat_not_cached_is_missed_money():
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG, "q1")), ts=0)
    money.enrich(done(rec("a", Usage(1600, 0, 0, 0, 10)), a))
    b = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG, "q2")), ts=30)
    r = rec("b", Usage(1600, 0, 0, 0, 10), prefix_segments=1)
    money.enrich(done(r, b))
    assert r.miss_reason == "not-cached"
    sys_tokens = -(-len(segs(body(LONG))[0].data) // 4)
    tokens = 1024 + (sys_tokens - 1024) // 128 * 128
    assert abs(r.missed_usd - tokens * (0.15 - 0.075) / 1e6) < 1e-12
    # the same repeat, cached by the provider: no reason, nothing missed
    c = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG, "q3")), ts=40)
    r = rec("c", Usage(1600, tokens, 0, 0, 10), prefix_segments=1)
    money.enrich(done(r, c))
    assert r.miss_reason is None and r.missed_usd == 0.0


def test_failed_request_keeps_the_request_time_reason():
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG)), ts=0)
    money.enrich(done(rec("a", Usage(10, 0, 0, 0, 1)), a))
    b = money.before("t", "openai", "gpt-4o", segs(body(LONG, model="gpt-4o")), ts=1)
    r = rec("b", None, model="gpt-4o")
    money.enrich(done(r, b))
    assert r.miss_reason.startswith("model-changed") and r.cost_usd is None


def test_unknown_prefix_is_not_a_miss():
    # The store was skipped (breaker open): what repeated is unknown, so what was missed is too.
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG, "q1")), ts=0)
    money.enrich(done(rec("a", Usage(1600, 0, 0, 0, 10)), a))
    b = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG, "q2")), ts=30)
    r = rec("b", Usage(1600, 0, 0, 0, 10), prefix_segments=None)
    money.enrich(done(r, b))
    assert r.cost_usd is not None and r.missed_usd is None


def test_a_flagged_usage_gets_null_money_even_after_a_seen_prefix():
    money = Money(PriceTable.load())
    a = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG)), ts=0)
    money.enrich(done(rec("a", Usage(1600, 0, 0, 0, 10)), a))
    b = money.before("t", "openai", "gpt-4o-mini", segs(body(LONG)), ts=10)
    r = rec("b", Usage(1600, 0, 0, 0, 10, flags=("usage.completion_tokens:too_large",)), prefix_segments=1)
    money.enrich(done(r, b))
    assert r.cost_usd is None and r.saved_usd is None and r.missed_usd is None


def test_the_cost_breakdown_is_set_with_the_cost():
    money = Money(PriceTable.load())
    r = rec("a", Usage(2006, 1920, 0, 0, 300))
    money.enrich(done(r))
    parts = r.cost_breakdown
    assert parts.total == r.cost_usd and parts.cache_read_usd == 1920 * 0.075 / 1e6
    unpriced = rec("x", Usage(100, 0, 0, 0, 5), model="private-llm")
    money.enrich(done(unpriced))
    assert unpriced.cost_breakdown is None


def test_the_price_is_looked_up_once_per_record_on_the_whole_path(tmp_path):
    import sqlite3

    from proxy.accounting.ledger import Ledger
    from proxy.accounting.metrics import Metrics
    from proxy.accounting.recorder import Recorder
    from proxy.accounting.stats import Stats

    prices = PriceTable.load()
    looked_up: list[str | None] = []
    lookup = prices.lookup
    prices.lookup = lambda model: looked_up.append(model) or lookup(model)  # type: ignore[method-assign]
    money = Money(prices)
    ledger = Ledger(str(tmp_path / "l.sqlite"))
    recorder = Recorder([Stats(), ledger, Metrics()], [money])
    for i, model in enumerate(("gpt-4o-mini", "gpt-4o-mini", "private-llm")):
        early = money.before("t", "openai", model, segs(body(LONG, f"q{i}", model=model)), ts=i)
        recorder.record(
            done(
                rec(f"r{i}", Usage(1600, 1024 if i else 0, 0, 0, 10), model=model, prefix_segments=min(i, 1)),
                early,
            )
        )
    ledger.close_sync()
    assert looked_up == ["gpt-4o-mini", "gpt-4o-mini", "private-llm"]
    rows = (
        sqlite3.connect(tmp_path / "l.sqlite")
        .execute(
            "SELECT cost_usd, cost_input_usd + cost_cache_read_usd + cost_cache_write_usd + cost_output_usd FROM requests ORDER BY id"
        )
        .fetchall()
    )
    assert [a == b for a, b in rows[:2]] == [True, True] and rows[2] == (None, None)


# --- GPT-5.6 writes, rules drift, the Chat Completions TTL split ------------------------------------------


def chat_56(parts_ttl: str | None = None, model: str = "gpt-5.6-terra") -> dict:
    """A GPT-5.6 Chat body: the system prompt's part marked as a breakpoint (``ttl`` its own, or none)."""
    mark = {"mode": "explicit", **({"ttl": parts_ttl} if parts_ttl else {})}
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": LONG, "prompt_cache_breakpoint": mark}]},
            {"role": "user", "content": "hi"},
        ],
    }


def test_gpt_5_6_writes_are_priced_at_the_write_rate():
    money = Money(PriceTable.load())
    early = money.before("t", "openai", "gpt-5.6-terra", segs(chat_56("30m")), ts=0)
    r = rec("a", Usage(6000, 2048, 3000, 0, 400), model="gpt-5.6-terra")
    money.enrich(done(r, early))
    # 952*2 + 2048*0.2 + 3000*2.5 + 400*12 = 14613.6 per 1M (tests/analyzer/test_cost.py)
    assert abs(r.cost_usd - 0.0146136) < 1e-9 and abs(r.cost_breakdown.cache_write_usd - 0.0075) < 1e-12
    assert r.drift == [] and r.flags == []


def test_chat_writes_with_a_12h_breakpoint_are_unpriced_and_flagged():
    money = Money(PriceTable.load())
    early = money.before("t", "openai", "gpt-5.6-terra", segs(chat_56("12h")), ts=0)
    assert any(s.cache_control == "12h" for s in early.cur.segments)
    r = rec("a", Usage(6000, 0, 3000, 0, 400), model="gpt-5.6-terra", prefix_segments=0)
    money.enrich(done(r, early))
    assert r.flags == [TTL_SPLIT_UNKNOWN] and r.drift == []  # not drift: only the split is unknown
    assert r.cost_usd is None and r.saved_usd is None and r.cost_breakdown is None and r.missed_usd is None
    from proxy.accounting.ledger_schema import FLAGS_COLUMN, row_for

    assert row_for(r, False)[FLAGS_COLUMN] == TTL_SPLIT_UNKNOWN
    # the same request without writes, or Responses usage (it has the split), is priced
    read_only = rec("b", Usage(6000, 4096, 0, 0, 400), model="gpt-5.6-terra")
    money.enrich(done(read_only, early))
    assert read_only.flags == [] and read_only.cost_usd is not None
    responses = RequestRecord(
        "c",
        0.0,
        "t",
        "openai",
        "/v1/responses",
        model="gpt-6.2-sol",
        status=200,
        analysed=True,
        usage=Usage(6000, 0, 3000, 0, 400, cache_write_12h_tokens=3000),
    )
    money.enrich(done(responses))
    # 3000*2 + 3000*5 + 400*10 = 25000 per 1M
    assert responses.flags == [] and abs(responses.cost_usd - 0.025) < 1e-9


def test_chat_12h_is_found_in_the_analysis_when_nothing_was_observed():
    from proxy.body_analysis import BodyAnalysis

    money = Money(PriceTable.load())
    r = rec("a", Usage(6000, 0, 3000, 0, 4), model="gpt-5.6-terra")
    money.enrich(Exchange(r, analysis=BodyAnalysis(True, segments=segs(chat_56("12h")))))
    assert r.flags == [TTL_SPLIT_UNKNOWN] and r.cost_usd is None
    plain = rec("b", Usage(6000, 0, 3000, 0, 4), model="gpt-5.6-terra")
    money.enrich(
        Exchange(plain, analysis=BodyAnalysis(True, segments=segs(chat_56())))
    )  # a mark with no ttl: 30m
    assert plain.flags == [] and plain.cost_usd is not None


def test_rules_drift_is_null_money_and_named_on_the_record():
    money = Money(PriceTable.load())
    older = rec("a", Usage(3000, 0, 2000, 0, 5), model="gpt-5.5")  # writes on a model whose row bills none
    money.enrich(done(older))
    assert older.drift == ["cache_write_tokens:not_billed_by_price_row"]
    assert older.cost_usd is None and older.saved_usd is None and older.missed_usd is None
    unknown = rec(
        "b",
        Usage(3000, 1024, 0, 0, 5, drift=("prompt_tokens_details.cache_x:unknown_field",)),
        model="gpt-4o-mini",
    )
    money.enrich(done(unknown))
    assert unknown.drift == ["prompt_tokens_details.cache_x:unknown_field"] and unknown.cost_usd is None
    from analyzer.logs.ledger_columns import COLUMNS
    from proxy.accounting.ledger_schema import row_for

    assert row_for(older, False)[COLUMNS.index("drift")] == "cache_write_tokens:not_billed_by_price_row"


# --- the provider's own miss reason on the record ----------------------------------------------------------


def anthropic_rec(rid: str, usage: Usage | None, ts: float = 0.0) -> RequestRecord:
    return RequestRecord(
        rid,
        ts,
        "t",
        "anthropic",
        "/v1/messages",
        model="claude-sonnet-4-6",
        status=200,
        analysed=True,
        usage=usage,
    )


def test_a_provider_miss_count_beyond_any_prompt_is_not_stored_as_tokens():
    """``cache_missed_input_tokens`` comes from the upstream: a count no prompt can have (above
    analyzer.usage.MAX_TOKENS) is an unknown shape, no tokens and no dollars, as a negative one is,
    so the stats' JSON and the ledger's SUM stay inside 64-bit integers."""
    import sqlite3

    import orjson

    from proxy.accounting.ledger_schema import INSERT, SCHEMA, row_for
    from proxy.accounting.stats import Stats
    from proxy.reporting.summary import summarize

    money = Money(PriceTable.load())
    records = []
    for i, tokens in enumerate((2**62, 10**30)):
        r = anthropic_rec(f"h{i}", Usage(5000, 0, 0, 0, 5), ts=float(i))
        money.enrich(
            Exchange(
                r,
                diagnostics={
                    "cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": tokens}
                },
            )
        )
        assert (
            r.provider_miss_reason == "unknown_shape"
            and r.provider_missed_tokens is None
            and r.provider_missed_usd is None
        )
        assert r.cost_usd is not None  # the request's own cost untouched
        records.append(r)
    fine = anthropic_rec("ok", Usage(5000, 0, 0, 0, 5))
    money.enrich(
        Exchange(
            fine,
            diagnostics={"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 4000}},
        )
    )
    assert (fine.provider_miss_reason, fine.provider_missed_tokens) == ("system_changed", 4000)
    assert abs(fine.provider_missed_usd - 4000 * 2.7 / 1e6) < 1e-12
    stats = Stats()
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    for r in (*records, fine):
        stats.handle(r)
        conn.execute(INSERT, row_for(r, log_bodies=False))
    orjson.dumps(stats.to_json())
    assert summarize(conn)["provider_miss_reasons"]["system_changed"]["missed_tokens"] == 4000


def test_a_drifted_row_prices_no_provider_miss_either():
    """Rules drift means the row's money is null: the provider's missed tokens are kept, their
    dollars are not priced on rules known to be stale."""
    money = Money(PriceTable.load())
    drifted = anthropic_rec(
        "d", Usage(5000, 0, 0, 0, 5, drift=("iterations[speculative_draft]:unknown_type",))
    )
    money.enrich(
        Exchange(
            drifted,
            diagnostics={"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 4000}},
        )
    )
    assert drifted.drift and drifted.cost_usd is None
    assert (drifted.provider_miss_reason, drifted.provider_missed_tokens, drifted.provider_missed_usd) == (
        "tools_changed",
        4000,
        None,
    )
