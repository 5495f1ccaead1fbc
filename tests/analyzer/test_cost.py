"""Hand-worked examples; every figure below is computed by hand in the comment beside it."""

from __future__ import annotations

import pytest

from analyzer.cost import UNPRICED, WRITES_NOT_BILLED, breakdown, cost_of, missed_usd, priceable, rules_drift
from analyzer.pricing import Price, PriceTable
from analyzer.usage import Usage, from_anthropic, from_openai_chat, from_openai_responses

TOL = 1e-9


@pytest.fixture(scope="module")
def table() -> PriceTable:
    return PriceTable.load()


def test_anthropic_mixed_5m_and_1h_writes(table):
    # Sonnet 4.5: $3 in, $3.75 5m write, $6 1h write, $0.30 read, $15 out (per 1M).
    usage = from_anthropic(
        {
            "input_tokens": 50,
            "cache_read_input_tokens": 100_000,
            "cache_creation_input_tokens": 10_000,
            "cache_creation": {"ephemeral_5m_input_tokens": 2_000, "ephemeral_1h_input_tokens": 8_000},
            "output_tokens": 500,
        }
    )
    cost = cost_of(usage, table.lookup("claude-sonnet-4-5-20250929"))
    # 50*3 + 100000*0.30 + 2000*3.75 + 8000*6 + 500*15 = 150 + 30000 + 7500 + 48000 + 7500 = 93150 → $0.09315
    assert abs(cost.cost_usd - 0.09315) < TOL
    # uncached: (50 + 100000 + 10000) * 3 + 500 * 15 = 330150 + 7500 = 337650 → $0.33765
    assert abs(cost.uncached_usd - 0.33765) < TOL
    assert abs(cost.saved_usd - 0.2445) < TOL


def test_write_only_request_saves_a_negative_amount(table):
    # Sonnet 4.5, first request: 10 plain tokens + 10000 written with the 5m TTL, no output.
    usage = from_anthropic({"input_tokens": 10, "cache_creation_input_tokens": 10_000, "output_tokens": 0})
    cost = cost_of(usage, table.lookup("claude-sonnet-4-5"))
    # cost: 10*3 + 10000*3.75 = 37530 → $0.03753; uncached: 10010*3 = 30030 → $0.03003
    assert abs(cost.cost_usd - 0.03753) < TOL
    assert abs(cost.saved_usd - (-0.0075)) < TOL


def test_one_hour_write_costs_twice_input(table):
    # Haiku 4.5: $1 in, $2 1h write. 4000 tokens written for 1h: $0.008 vs $0.004 uncached.
    usage = from_anthropic(
        {"input_tokens": 0, "cache_creation": {"ephemeral_1h_input_tokens": 4000}, "output_tokens": 0}
    )
    cost = cost_of(usage, table.lookup("claude-haiku-4-5"))
    assert abs(cost.cost_usd - 0.008) < TOL
    assert abs(cost.saved_usd - (-0.004)) < TOL


def test_openai_prompt_total_includes_cached(table):
    # OpenAI's prompt-caching guide example: prompt_tokens 2006 of which 1920 cached.
    usage = from_openai_chat(
        {"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}}
    )
    cost = cost_of(usage, table.lookup("gpt-4o-mini"))
    # gpt-4o-mini $0.15 in / $0.075 cached / $0.60 out:
    # 86*0.15 + 1920*0.075 + 300*0.60 = 12.9 + 144 + 180 = 336.9 → $0.0003369
    assert abs(cost.cost_usd - 0.0003369) < TOL
    # uncached: 2006*0.15 + 180 = 480.9 → $0.0004809; saved 1920*(0.15-0.075) = 144 → $0.000144
    assert abs(cost.uncached_usd - 0.0004809) < TOL
    assert abs(cost.saved_usd - 0.000144) < TOL


def test_breakdown_parts_sum_to_cost(table):
    usage = from_openai_chat(
        {"prompt_tokens": 5000, "completion_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 4096}}
    )
    price = table.lookup("gpt-4.1")
    parts = breakdown(usage, price)
    # 904*2 = 1808; 4096*0.5 = 2048; 0 writes; 1000*8 = 8000
    assert abs(parts.input_usd - 0.001808) < TOL
    assert abs(parts.cache_read_usd - 0.002048) < TOL
    assert parts.cache_write_usd == 0
    assert abs(parts.output_usd - 0.008) < TOL
    assert abs(parts.total - cost_of(usage, price).cost_usd) < TOL


def test_missed_savings(table):
    # 1024 tokens on gpt-4.1 that could have been read: 1024 * (2.00 - 0.50) = 1536 → $0.001536
    assert abs(missed_usd(1024, table.lookup("gpt-4.1")) - 0.001536) < TOL
    # Opus 4.1: 3000 * (15 - 1.5) = 40500 → $0.0405
    assert abs(missed_usd(3000, table.lookup("claude-opus-4-1")) - 0.0405) < TOL
    assert missed_usd(0, table.lookup("gpt-4.1")) == 0
    assert missed_usd(-5, table.lookup("gpt-4.1")) == 0


def test_unknown_model_is_none_never_zero(table):
    usage = from_openai_chat({"prompt_tokens": 100, "completion_tokens": 10})
    cost = cost_of(usage, table.lookup("some-private-model"))
    assert cost.cost_usd is None and cost.saved_usd is None and not cost.priced
    assert missed_usd(100, None) is None
    assert cost_of(None, table.lookup("gpt-4o")).cost_usd is None


def test_price_without_cache_rates_bills_reads_as_input_and_writes_are_drift():
    price = Price(model="m", provider="p", input=2.0, output=4.0)
    usage = from_anthropic({"input_tokens": 100, "cache_read_input_tokens": 300, "output_tokens": 10})
    cost = cost_of(usage, price)
    # (100+300)*2 + 10*4 = 840 → $0.00084, saved exactly 0
    assert abs(cost.cost_usd - 0.00084) < TOL
    assert abs(cost.saved_usd) < TOL
    assert missed_usd(1000, price) == 0
    # A row with no cache_write_* bills no writes: writes reported for it mean the rules are stale.
    wrote = from_anthropic(
        {
            "input_tokens": 100,
            "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 600,
            "output_tokens": 10,
        }
    )
    assert rules_drift(wrote, price) == (WRITES_NOT_BILLED,)
    assert cost_of(wrote, price) == UNPRICED


def test_a_clamped_usage_number_is_priced_null_never_a_guess(table):
    price = table.lookup("gpt-4o-mini")
    usage = from_openai_chat({"prompt_tokens": 100, "completion_tokens": 9223372036854775808})
    assert usage.flags and cost_of(usage, price).cost_usd is None and not cost_of(usage, price).priced


def test_the_cost_carries_its_breakdown_computed_once(table):
    price = table.lookup("claude-sonnet-4-5")
    usage = Usage(12000, 1000, 10000, 4000, 20)
    cost = cost_of(usage, price)
    assert cost.parts == breakdown(usage, price) and cost.parts.total == cost.cost_usd
    assert cost_of(usage, None).parts is None and cost_of(None, price).parts is None


# --- GPT-5.6+: billed writes (analyzer/prices.json rows; rates per 1M tokens) ---------------------------


def test_gpt_5_6_chat_writes_cost_1_25x_input(table):
    # gpt-5.6-terra: $2 in, $0.20 read, $2.50 30m write, $12 out.
    usage = from_openai_chat(
        {
            "prompt_tokens": 6000,
            "completion_tokens": 400,
            "prompt_tokens_details": {"cached_tokens": 2048, "cache_write_tokens": 3000},
        }
    )
    assert (usage.uncached_input_tokens, usage.cache_write_short_tokens, usage.drift) == (952, 3000, ())
    cost = cost_of(usage, table.lookup("gpt-5.6-terra"))
    # 952*2 + 2048*0.2 + 3000*2.5 + 400*12 = 1904 + 409.6 + 7500 + 4800 = 14613.6 → $0.0146136
    assert abs(cost.cost_usd - 0.0146136) < TOL
    assert abs(cost.parts.cache_write_usd - 0.0075) < TOL and abs(cost.parts.cache_read_usd - 0.0004096) < TOL
    # uncached: 6000*2 + 4800 = 16800 → $0.0168; saved 0.0168 − 0.0146136 = 0.0021864
    assert abs(cost.uncached_usd - 0.0168) < TOL and abs(cost.saved_usd - 0.0021864) < TOL


def test_responses_ttl_split_prices_each_ttl(table):
    # gpt-6.2-sol: $2 in, $0.10 read, $2.50 30m, $5 12h, $10 out.
    usage = from_openai_responses(
        {
            "input_tokens": 10_000,
            "output_tokens": 200,
            "input_tokens_details": {
                "cached_tokens": 4000,
                "cache_write_tokens": 5000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 1000, "ttl_12h_tokens": 4000},
            },
        }
    )
    assert (usage.cache_write_tokens, usage.cache_write_12h_tokens, usage.cache_write_short_tokens) == (
        5000,
        4000,
        1000,
    )
    price = table.lookup("gpt-6.2-sol")
    cost = cost_of(usage, price)
    # 1000*2 + 4000*0.1 + 1000*2.5 + 4000*5 + 200*10 = 2000 + 400 + 2500 + 20000 + 2000 = 26900 → $0.0269
    assert abs(cost.cost_usd - 0.0269) < TOL
    assert abs(cost.parts.cache_write_usd - 0.0225) < TOL
    # missed 4500 tokens: the 12h writes first, then the 30m ones: 4000*(5−0.1) + 500*(2.5−0.1) = 20800 → $0.0208
    assert abs(missed_usd(4500, price, usage) - 0.0208) < TOL


def test_12h_writes_on_a_row_without_a_12h_rate_price_null(table):
    price = table.lookup("gpt-5.6-sol")  # cache_write_12h null: unpublished
    with_12h = from_openai_responses(
        {
            "input_tokens": 3000,
            "output_tokens": 5,
            "input_tokens_details": {
                "cached_tokens": 0,
                "cache_write_tokens": 2000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 0, "ttl_12h_tokens": 2000},
            },
        }
    )
    assert not priceable(with_12h, price) and cost_of(with_12h, price) == UNPRICED
    only_30m = from_openai_responses(
        {
            "input_tokens": 3000,
            "output_tokens": 5,
            "input_tokens_details": {
                "cached_tokens": 0,
                "cache_write_tokens": 2000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 2000, "ttl_12h_tokens": 0},
            },
        }
    )
    # 1000*4 + 2000*5 + 5*20 = 4000 + 10000 + 100 = 14100 → $0.0141
    assert abs(cost_of(only_30m, price).cost_usd - 0.0141) < TOL


def test_writes_on_a_model_before_5_6_are_rules_drift_priced_null(table):
    price = table.lookup("gpt-5.5")
    usage = from_openai_chat(
        {
            "prompt_tokens": 3000,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 2000},
        }
    )
    assert usage.drift == () and rules_drift(usage, price) == (WRITES_NOT_BILLED,)
    assert cost_of(usage, price) == UNPRICED
    no_writes = from_openai_chat(
        {"prompt_tokens": 3000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1024}}
    )
    assert rules_drift(no_writes, price) == () and cost_of(no_writes, price).priced


def test_parser_drift_prices_null_with_every_price(table):
    usage = from_openai_chat(
        {
            "prompt_tokens": 3000,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 1024, "cache_hit_ratio_tokens": 9},
        }
    )
    assert usage.drift == ("prompt_tokens_details.cache_hit_ratio_tokens:unknown_field",)
    for name in ("gpt-5.6-terra", "gpt-4o-mini"):
        assert cost_of(usage, table.lookup(name)) == UNPRICED


def test_anthropic_compaction_pass_is_billed_exactly(table):
    # Sonnet 4.5: $3 in, $0.30 read, $3.75 5m write, $15 out. The message: 20 in + 1000 read + 500 written, 300 out;
    # the compaction pass (only in usage.iterations): 8000 in + 2000 read, 700 out.
    usage = from_anthropic(
        {
            "input_tokens": 20,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 500,
            "output_tokens": 300,
            "iterations": [
                {
                    "type": "compaction",
                    "input_tokens": 8000,
                    "cache_read_input_tokens": 2000,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": 700,
                },
                {
                    "type": "message",
                    "input_tokens": 20,
                    "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 500,
                    "output_tokens": 300,
                },
            ],
        }
    )
    cost = cost_of(usage, table.lookup("claude-sonnet-4-5"))
    # (20+8000)*3 + 3000*0.3 + 500*3.75 + 1000*15 = 24060 + 900 + 1875 + 15000 = 41835 → $0.041835
    assert abs(cost.cost_usd - 0.041835) < TOL


def test_writes_at_a_ttl_the_row_does_not_price_are_null_not_plain_input():
    """A row that bills writes but leaves one TTL's rate out (a --prices row with only
    cache_write_5m, or only cache_write_12h) cannot price writes at that TTL: null, as GPT-5.6's
    unpublished 12 h rate is, never the plain input rate."""
    anthropic_5m_only = Price(
        model="claude-x", provider="anthropic", input=3.0, output=15.0, cache_read=0.3, cache_write_5m=3.75
    )
    one_hour = from_anthropic(
        {
            "input_tokens": 10,
            "cache_creation_input_tokens": 1000,
            "output_tokens": 5,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1000},
        }
    )
    assert not priceable(one_hour, anthropic_5m_only) and cost_of(one_hour, anthropic_5m_only) == UNPRICED
    five_minutes = from_anthropic(
        {"input_tokens": 10, "cache_creation_input_tokens": 1000, "output_tokens": 5}
    )
    # 10*3 + 1000*3.75 + 5*15 = 30 + 3750 + 75 = 3855 → $0.003855
    assert abs(cost_of(five_minutes, anthropic_5m_only).cost_usd - 0.003855) < TOL
    openai_12h_only = Price(
        model="gpt-x", provider="openai", input=2.0, output=10.0, cache_read=0.2, cache_write_12h=5.0
    )
    short = from_openai_responses(
        {
            "input_tokens": 3000,
            "output_tokens": 5,
            "input_tokens_details": {
                "cached_tokens": 0,
                "cache_write_tokens": 2000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 2000, "ttl_12h_tokens": 0},
            },
        }
    )
    assert cost_of(short, openai_12h_only) == UNPRICED
    long = from_openai_responses(
        {
            "input_tokens": 3000,
            "output_tokens": 5,
            "input_tokens_details": {
                "cached_tokens": 0,
                "cache_write_tokens": 2000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 0, "ttl_12h_tokens": 2000},
            },
        }
    )
    # 1000*2 + 2000*5 + 5*10 = 2000 + 10000 + 50 = 12050 → $0.01205
    assert abs(cost_of(long, openai_12h_only).cost_usd - 0.01205) < TOL
