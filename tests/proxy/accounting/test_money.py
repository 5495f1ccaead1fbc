from __future__ import annotations

from analyzer.pricing import PriceTable
from analyzer.segments import segments_for
from analyzer.usage import Usage
from proxy.accounting.money import Early, Money
from proxy.accounting.records import RequestRecord
from proxy.exchange import Exchange

LONG = "Policy: refunds within 30 days; be polite and precise. " * 110  # ~6 KB


def body(system: str, user: str = "hi", model: str = "gpt-4o-mini") -> dict:
    return {"model": model, "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


def segs(b: dict):
    return segments_for("openai", "/v1/chat/completions", b)


def rec(rid: str, usage: Usage | None, model: str = "gpt-4o-mini", prefix_segments: int = 0) -> RequestRecord:
    return RequestRecord(rid, 0.0, "t", "openai", "/v1/chat/completions", model=model, status=200 if usage else 502,
                         analysed=True, usage=usage, prefix_segments=prefix_segments)


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
    assert r.missed_usd == 0.0  # the proxy saw no repeated prefix (it forked at segment 0)


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
        recorder.record(done(rec(f"r{i}", Usage(1600, 1024 if i else 0, 0, 0, 10), model=model, prefix_segments=min(i, 1)), early))
    ledger.close_sync()
    assert looked_up == ["gpt-4o-mini", "gpt-4o-mini", "private-llm"]
    rows = sqlite3.connect(tmp_path / "l.sqlite").execute(
        "SELECT cost_usd, cost_input_usd + cost_cache_read_usd + cost_cache_write_usd + cost_output_usd FROM requests ORDER BY id").fetchall()
    assert [a == b for a, b in rows[:2]] == [True, True] and rows[2] == (None, None)
