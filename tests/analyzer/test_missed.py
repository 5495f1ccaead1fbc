"""Missed savings, one worked example per provider (figures by hand in the comments, to 1e-9),
and the edges of "the same prompt but for a volatile value"."""

from __future__ import annotations

import pytest

from analyzer.cost import missed_usd
from analyzer.missed import longest, missed_tokens, reusable, same_but_volatile
from analyzer.pricing import PriceTable
from analyzer.segments import segments_for
from analyzer.usage import Usage

TOL = 1e-9
BODY = "You are the billing assistant for ACME; answer in one short paragraph. " * 100  # 7,100 bytes
PRICES = PriceTable.load()


def openai_segments(ts: str, question: str):
    body = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": f"Current time: {ts}. {BODY}"},
            {"role": "user", "content": question},
        ],
    }
    return segments_for("openai", "/v1/chat/completions", body)


def anthropic_segments(ts: str, question: str, ttl: str | None = None):
    cc = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 10,
        "system": [{"type": "text", "text": f"Current time: {ts}. {BODY}", "cache_control": cc}],
        "messages": [{"role": "user", "content": question}],
    }
    return segments_for("anthropic", "/v1/messages", body)


def test_openai_worked_example():
    earlier = openai_segments("2026-11-30T10:00:01Z", "What is my balance?")
    later = openai_segments("2026-11-30T10:04:59Z", "When is my invoice due?")
    reuse = reusable(later, earlier)
    # The system prompt differs only in the time; the new question ends the prefix.
    assert (reuse.segments, reuse.volatile) == (1, ("time",))
    # 7,206 canonical bytes (tag + JSON of the system message) → ceil(7206 / 4) = 1,802 tokens
    assert reuse.bytes == len(later[0].data) == 7206
    # OpenAI caches from 1,024 tokens in 128-token steps: 1,024 + 6 × 128 = 1,792 ≤ 1,802
    usage = Usage(1830, 0, 0, 0, 20)  # the provider read nothing from its cache
    tokens = missed_tokens("openai", "gpt-4o-mini", reuse.bytes, usage.cached_tokens, usage.input_tokens)
    assert tokens == 1792
    # gpt-4o-mini: $0.15 input, $0.075 cached read per 1M; no write premium on OpenAI:
    # 1,792 × (0.15 − 0.075) = 134.4 → $0.0001344
    assert abs(missed_usd(tokens, PRICES.lookup("gpt-4o-mini"), usage) - 0.0001344) < TOL


def test_anthropic_worked_example_with_the_write_premium():
    earlier = anthropic_segments("2026-11-30T10:00:01Z", "What is my balance?")
    later = anthropic_segments("2026-11-30T10:07:30Z", "When is my invoice due?")
    reuse = reusable(later, earlier)
    # 7,169 bytes → 1,793 tokens; Sonnet 4.6 caches from 1,024 tokens, at any length above
    assert (reuse.segments, reuse.bytes, reuse.volatile) == (1, 7169, ("time",))
    # The provider wrote the system block again (1,790 tokens at the 5-minute write rate),
    # 20 tokens plain, nothing read.
    usage = Usage(1810, 0, 1790, 0, 5)
    tokens = missed_tokens(
        "anthropic", "claude-sonnet-4-6", reuse.bytes, usage.cached_tokens, usage.input_tokens
    )
    assert tokens == 1793
    # The first 1,790 missed tokens were written: (3.75 − 0.30) × 1,790 = 6,175.5;
    # the other 3 paid plain input:               (3.00 − 0.30) × 3     =     8.1
    # 6,183.6 per 1M → $0.0061836
    assert abs(missed_usd(tokens, PRICES.lookup("claude-sonnet-4-6"), usage) - 0.0061836) < TOL


def test_one_hour_writes_come_first_then_five_minute_writes_then_plain_input():
    usage = Usage(
        5000, 1000, 3000, 1000, 0
    )  # 1,000 read, 1,000 written for 1 h, 2,000 for 5 min, 1,000 plain
    price = PRICES.lookup("claude-sonnet-4-6")
    # 3,500 missed: 1,000 × (6 − 0.3) + 2,000 × (3.75 − 0.3) + 500 × (3 − 0.3) = 5,700 + 6,900 + 1,350 = 13,950
    assert abs(missed_usd(3500, price, usage) - 0.01395) < TOL
    # without a usage block every missed token counts as plain input: 3,500 × 2.7 = 9,450
    assert abs(missed_usd(3500, price) - 0.00945) < TOL
    assert missed_usd(3500, None, usage) is None  # unpriced: null, never $0


def test_a_changed_instruction_is_not_a_volatile_value():
    earlier = openai_segments("2026-11-30T10:00:01Z", "q")
    edited = segments_for(
        "openai",
        "/v1/chat/completions",
        {
            "model": "gpt-4o-mini",
            "messages": [
                {
                    "role": "system",
                    "content": f"Current time: 2026-11-30T10:00:01Z. {BODY.replace('ACME', 'Acme')}",
                },
                {"role": "user", "content": "q"},
            ],
        },
    )
    assert reusable(edited, earlier).segments == 0
    # a value of another kind in the same place is no "same prompt" either
    assert (
        same_but_volatile(
            b'{"t":"Time 2026-11-30T10:00:01Z"}', b'{"t":"Time 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a0b"}'
        )
        is None
    )


def test_several_values_and_the_same_question_repeat_the_whole_prompt():
    a = openai_segments(
        "2026-11-30T10:00:01Z req 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a0b", "What is my balance?"
    )
    b = openai_segments(
        "2026-11-30T10:09:09Z req 9a0b1c3d-8d4a-4e6f-9b2a-3f2b9c1e5e7f", "What is my balance?"
    )
    reuse = reusable(b, a)
    assert (
        reuse.segments == 2
        and reuse.volatile == ("time", "uuid")
        and reuse.bytes == sum(len(s.data) for s in b)
    )
    assert same_but_volatile(b"same", b"same") == ()


def test_a_partly_cached_prefix_misses_only_the_rest():
    # The time sits after 1,400 stable tokens: the provider read 1,280 of them (1,024 + 2 × 128).
    head = "Stable policy text. " * 280  # 5,600 bytes

    def segs(ts: str):
        return segments_for(
            "openai",
            "/v1/chat/completions",
            {
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": f"{head}Current time: {ts}. {BODY}"},
                    {"role": "user", "content": "q"},
                ],
            },
        )

    reuse = reusable(segs("2026-11-30T10:09:09Z"), segs("2026-11-30T10:00:01Z"))
    could = 1024 + (-(-reuse.bytes // 4) - 1024) // 128 * 128
    assert missed_tokens("openai", "gpt-4o-mini", reuse.bytes, 1280, None) == could - 1280 > 0
    # within one 128-token step of what was cached: the estimate's rounding, not a miss
    assert missed_tokens("openai", "gpt-4o-mini", reuse.bytes, could - 127, None) == 0


def test_below_the_minimum_nothing_is_missed_and_longest_picks_the_longer_prefix():
    a = openai_segments("2026-11-30T10:00:01Z", "q")
    assert missed_tokens("openai", "gpt-4o-mini", 4000, 0, None) == 0  # 1,000 tokens < 1,024
    exact = reusable(a, a, repeated=0)
    assert longest(None, exact).segments == 2 and longest().bytes == 0


@pytest.mark.parametrize("kind_a,kind_b", [("system", "message")])
def test_segments_of_different_kinds_never_match(kind_a, kind_b):
    from analyzer.segments import Segment

    a = [Segment(kind_a, "x", b"s\x1fTime 2026-11-30T10:00:01Z")]
    b = [Segment(kind_b, "x", b"s\x1fTime 2026-11-30T10:00:09Z")]
    assert reusable(a, b).segments == 0


# -- GPT-5.6+: breakpoints, exact matches, billed writes ----------------------------------------

DEV = "You are a coding agent working in the user's repository; follow the repository's conventions. " * 383
MARK = {"prompt_cache_breakpoint": {"mode": "explicit"}}


def codex_segments(question: str, *, mark: bool = False, tools=None, model: str = "gpt-5.6-terra"):
    dev = {"role": "developer", "content": [{"type": "text", "text": DEV, **(MARK if mark else {})}]}
    body = {"model": model, "messages": [dev, {"role": "user", "content": question}]}
    if tools is not None:
        body["tools"] = tools
    return segments_for("openai", "/v1/chat/completions", body)


def test_gpt56_codex_worked_example_the_write_premium_on_every_rewrite():
    earlier = codex_segments("Fix the failing test in tests/test_app.py.")
    later = codex_segments("Now add a test for the empty input case.")
    reuse = reusable(later, earlier)
    # The developer message repeats byte for byte; the new question ends the prefix.
    assert (reuse.segments, reuse.bytes, reuse.volatile) == (1, 36078, ())
    # 36,078 bytes → ceil(36078 / 4) = 9,020 tokens; 5.6 matches exactly at a breakpoint:
    # no 128-token rounding (before 5.6 it would be 1,024 + 62 × 128 = 8,960)
    # The app marked nothing: the only breakpoint was the implicit one at the new user message, so
    # nothing was read and all 9,046 prompt tokens were written again (30-minute TTL).
    usage = Usage(9046, 0, 9046, 0, 50)
    tokens = missed_tokens("openai", "gpt-5.6-terra", reuse.bytes, usage.cached_tokens, usage.input_tokens)
    assert tokens == 9020
    assert missed_tokens("openai", "gpt-5.5", reuse.bytes, 0, None) == 8960
    # gpt-5.6-terra: $2.00 input, $0.20 cached read, $2.50 per 1M for a 30-minute write (1.25×).
    # The 9,020 missed tokens were all written: 9,020 × (2.50 − 0.20) = 20,746 → $0.020746
    assert abs(missed_usd(tokens, PRICES.lookup("gpt-5.6-terra"), usage) - 0.020746) < TOL


def test_gpt56_a_marked_head_read_in_full_misses_nothing_and_the_tolerance_is_small():
    reuse = reusable(codex_segments("b", mark=True), codex_segments("a", mark=True))
    assert missed_tokens("openai", "gpt-5.6-terra", reuse.bytes, 9020, 9030) == 0
    # 1% of 9,020 = 90 tokens: a shortfall under it is the byte estimate's rounding …
    assert missed_tokens("openai", "gpt-5.6-terra", reuse.bytes, 9020 - 89, None) == 0
    # … from it on a miss (before 5.6 a shortfall had to reach a whole 128-token step)
    assert missed_tokens("openai", "gpt-5.6-terra", reuse.bytes, 9020 - 90, None) == 90
    # small prefixes keep 32 tokens of tolerance
    assert missed_tokens("openai", "gpt-5.6-terra", 4400, 1100 - 31, None) == 0
    assert missed_tokens("openai", "gpt-5.6-terra", 4400, 1100 - 32, None) == 32
    # below 1,024 tokens a 5.6 breakpoint is neither written nor read
    assert missed_tokens("openai", "gpt-5.6-terra", 4000, 0, None) == 0


def test_gpt56_reuse_is_cut_back_to_where_a_breakpoint_can_sit():
    from analyzer.missed import Reuse, at_breakpoint

    tool = {
        "type": "function",
        "function": {"name": "grep", "description": "search " * 1500, "parameters": {}},
    }
    a = codex_segments("q", tools=[tool])
    edited = segments_for(
        "openai",
        "/v1/chat/completions",
        {
            "model": "gpt-5.6-terra",
            "tools": [tool],
            "messages": [
                {"role": "developer", "content": DEV.replace("coding", "careful")},
                {"role": "user", "content": "q"},
            ],
        },
    )
    reuse = reusable(edited, a)
    assert reuse.segments == 1 and a[0].kind == "tool"  # only the tools repeat …
    # … and no marker can end a tool: a 5.6 app could have read nothing of them
    assert at_breakpoint("openai", "gpt-5.6-terra", edited, reuse) == Reuse(0, 0)
    # older models and Anthropic keep the prefix as it is
    assert at_breakpoint("openai", "gpt-5.5", edited, reuse) == reuse
    whole = reusable(a, a)
    assert at_breakpoint("openai", "gpt-5.6-terra", a, whole) == whole


def test_gpt56_responses_instructions_count_as_a_head_a_marked_item_could_read():
    from analyzer.missed import at_breakpoint

    def resp(question: str):
        return segments_for(
            "openai", "/v1/responses", {"model": "gpt-5.6-sol", "instructions": DEV, "input": question}
        )

    later = resp("b")
    reuse = at_breakpoint("openai", "gpt-5.6-sol", later, reusable(later, resp("a")))
    assert reuse.segments == 1 and later[0].kind == "instructions"
    assert missed_tokens("openai", "gpt-5.6-sol", reuse.bytes, 0, None) == -(-reuse.bytes // 4)


def test_gpt56_missed_tokens_are_counted_in_the_providers_tokens():
    """A tokenizer counting 20% more tokens than the byte estimate: a fully cached head is no miss,
    and an unread head is missed in the provider's tokens, not the estimate's."""
    from analyzer.missed import missed_tokens

    head, total = 4 * 9000, 4 * 9200  # bytes: ≈ 9,000 estimated tokens of head, 9,200 in all
    provider_head, provider_input = 10800, 11040  # the same prompt in the provider's tokens (1.2×)
    assert missed_tokens("openai", "gpt-5.6-terra", head, provider_head, provider_input, total) == 0
    assert missed_tokens("openai", "gpt-5.6-terra", head, 0, provider_input, total) == provider_head
    # without the prompt's size the estimate stands (and a cached head 1.2× larger is still no miss)
    assert missed_tokens("openai", "gpt-5.6-terra", head, provider_head, provider_input) == 0
