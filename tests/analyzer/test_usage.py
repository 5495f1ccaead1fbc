import pytest

from analyzer.usage import (
    MAX_TOKENS,
    Usage,
    from_anthropic,
    from_any,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    merge_anthropic_stream,
)


def test_openai_chat_counts_cached_inside_prompt_total():
    u = from_openai_chat(
        {"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}}
    )
    assert (u.input_tokens, u.cached_tokens, u.output_tokens) == (2006, 1920, 300)
    assert u.uncached_input_tokens == 86


def test_deepseek_hit_and_miss_fields():
    u = from_openai_chat(
        {
            "prompt_tokens": 0,
            "prompt_cache_hit_tokens": 700,
            "prompt_cache_miss_tokens": 300,
            "completion_tokens": 5,
        }
    )
    assert (u.input_tokens, u.cached_tokens) == (1000, 700)


def test_responses_usage():
    u = from_openai_responses(
        {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 1280}, "output_tokens": 12}
    )
    assert (u.input_tokens, u.cached_tokens, u.output_tokens) == (1500, 1280, 12)


def test_anthropic_adds_cache_reads_and_writes_to_input():
    u = from_anthropic(
        {
            "input_tokens": 50,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 3000,
            "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
            "output_tokens": 7,
        }
    )
    assert u.input_tokens == 4050
    assert (u.cached_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.cache_write_short_tokens) == (
        1000,
        3000,
        2000,
        1000,
    )
    assert u.uncached_input_tokens == 50


def test_anthropic_stream_merge_takes_output_from_delta():
    start = {"input_tokens": 10, "cache_read_input_tokens": 2048, "output_tokens": 1}
    delta = {"output_tokens": 42}
    u = merge_anthropic_stream(start, delta)
    assert (u.input_tokens, u.cached_tokens, u.output_tokens) == (2058, 2048, 42)


def test_gemini_counts_cached_inside_prompt():
    u = from_gemini({"promptTokenCount": 5000, "cachedContentTokenCount": 4096, "candidatesTokenCount": 10})
    assert (u.input_tokens, u.cached_tokens, u.output_tokens) == (5000, 4096, 10)


def test_from_any_recognises_each_shape():
    assert from_any({"prompt_tokens": 3, "completion_tokens": 1}).input_tokens == 3
    assert from_any({"input_tokens": 3, "cache_read_input_tokens": 4}).input_tokens == 7
    assert from_any({"promptTokenCount": 9}).input_tokens == 9
    assert from_any({"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0}}).input_tokens == 9
    assert from_any({"nothing": 1}) is None
    assert from_any("nope") is None


def test_garbage_numbers_become_zero_never_raise():
    u = from_openai_chat({"prompt_tokens": "12", "completion_tokens": None, "prompt_tokens_details": "x"})
    assert u == Usage(flags=("usage.prompt_tokens:not_a_number",))  # a null is just absent: no flag


@pytest.mark.parametrize(
    "value, expected, why",
    [
        (9223372036854775808, MAX_TOKENS, "too_large"),
        (2**80, MAX_TOKENS, "too_large"),
        (1e300, MAX_TOKENS, "too_large"),
        (-5, 0, "negative"),
        (-0.5, 0, "negative"),
        (float("nan"), 0, "not_a_number"),
        (float("inf"), 0, "not_a_number"),
        (True, 0, "not_a_number"),
        ("300", 0, "not_a_number"),
        ([1], 0, "not_a_number"),
        (12.5, 12, "not_an_integer"),
    ],
)
def test_absurd_counts_are_clamped_or_zeroed_and_flagged(value, expected, why):
    u = from_openai_chat({"prompt_tokens": 10, "completion_tokens": value})
    assert (u.input_tokens, u.output_tokens) == (10, expected)
    assert u.flags == (f"usage.completion_tokens:{why}",)


def test_plain_counts_carry_no_flags():
    assert from_openai_chat({"prompt_tokens": 10, "completion_tokens": 12.0}).flags == ()
    assert from_anthropic({"input_tokens": 5, "output_tokens": 1}).flags == ()


def test_sums_are_capped_too_and_stay_consistent():
    u = from_anthropic(
        {
            "input_tokens": MAX_TOKENS,
            "cache_read_input_tokens": MAX_TOKENS,
            "cache_creation": {"ephemeral_1h_input_tokens": 2**70, "ephemeral_5m_input_tokens": 7},
            "output_tokens": -1,
        }
    )
    assert u.input_tokens == u.cached_tokens == u.cache_write_tokens == u.cache_write_1h_tokens == MAX_TOKENS
    assert u.output_tokens == 0
    assert set(u.flags) == {
        "usage.ephemeral_1h_input_tokens:too_large",
        "usage.cache_write_tokens:too_large",
        "usage.input_tokens:too_large",
        "usage.output_tokens:negative",
    }
    g = from_gemini(
        {"promptTokenCount": 1, "candidatesTokenCount": MAX_TOKENS, "thoughtsTokenCount": MAX_TOKENS}
    )
    assert g.output_tokens == MAX_TOKENS and g.flags == ("usage.output_tokens:too_large",)
    d = from_openai_chat(
        {"prompt_tokens": 0, "prompt_cache_hit_tokens": MAX_TOKENS, "prompt_cache_miss_tokens": MAX_TOKENS}
    )
    assert d.input_tokens == d.cached_tokens == MAX_TOKENS and d.flags == ("usage.input_tokens:too_large",)


def test_usage_rejects_negative_and_inconsistent():
    with pytest.raises(ValueError):
        Usage(input_tokens=-1)
    with pytest.raises(ValueError):
        Usage(cache_write_tokens=1, cache_write_1h_tokens=2)


def test_usage_adds():
    total = Usage(10, 5, 2, 1, 3) + Usage(1, 1, 0, 0, 1, flags=("usage.x:negative",))
    assert total == Usage(11, 6, 2, 1, 4, flags=("usage.x:negative",))


def test_gemini_tool_use_prompt_is_input_and_thoughts_are_output():
    u = from_gemini(
        {
            "promptTokenCount": 5000,
            "cachedContentTokenCount": 4096,
            "toolUsePromptTokenCount": 200,
            "candidatesTokenCount": 10,
            "thoughtsTokenCount": 30,
            "totalTokenCount": 5240,
        }
    )
    assert (u.input_tokens, u.cached_tokens, u.output_tokens, u.flags) == (5200, 4096, 40, ())
    assert from_gemini({"promptTokenCount": "x", "cachedContentTokenCount": 9}).flags == (
        "usage.promptTokenCount:not_a_number",
    )


# --- cache writes on both OpenAI APIs, compaction passes, rules drift (the foundation's parsers) ----------

COMPACTION = {
    "type": "compaction",
    "input_tokens": 8000,
    "cache_read_input_tokens": 2000,
    "cache_creation_input_tokens": 0,
    "output_tokens": 700,
}
MESSAGE = {
    "type": "message",
    "input_tokens": 20,
    "cache_read_input_tokens": 1000,
    "cache_creation_input_tokens": 500,
    "output_tokens": 300,
}


def test_openai_chat_and_responses_report_writes():
    chat = from_openai_chat(
        {
            "prompt_tokens": 6000,
            "completion_tokens": 4,
            "prompt_tokens_details": {"cached_tokens": 2048, "cache_write_tokens": 3000},
        }
    )
    assert (chat.input_tokens, chat.cached_tokens, chat.cache_write_tokens, chat.uncached_input_tokens) == (
        6000,
        2048,
        3000,
        952,
    )
    assert chat.cache_write_12h_tokens == 0 and chat.cache_write_short_tokens == 3000 and chat.drift == ()
    resp = from_openai_responses(
        {
            "input_tokens": 10_000,
            "output_tokens": 2,
            "input_tokens_details": {
                "cached_tokens": 4000,
                "cache_write_tokens": 5000,
                "cache_write_tokens_details": {"ttl_30m_tokens": 1000, "ttl_12h_tokens": 4000},
            },
        }
    )
    assert (
        resp.cache_write_tokens,
        resp.cache_write_12h_tokens,
        resp.cache_write_short_tokens,
        resp.drift,
    ) == (5000, 4000, 1000, ())
    assert (
        from_any(
            {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 6}}
        ).cache_write_tokens
        == 6
    )


def test_compaction_iterations_are_added_once_and_message_ones_are_not():
    u = from_anthropic(
        {**{k: v for k, v in MESSAGE.items() if k != "type"}, "iterations": [COMPACTION, MESSAGE]}
    )
    # top level 20 + 1000 + 500 (the message, already in it) + the compaction pass 8000 + 2000
    assert (u.input_tokens, u.cached_tokens, u.cache_write_tokens, u.output_tokens) == (
        11520,
        3000,
        500,
        1000,
    )
    assert u.uncached_input_tokens == 8020 and u.drift == ()
    two = from_anthropic(
        {"input_tokens": 1, "output_tokens": 1, "iterations": [COMPACTION, COMPACTION, MESSAGE]}
    )
    assert (two.input_tokens, two.output_tokens) == (1 + 2 * 10_000, 1 + 2 * 700)  # each pass is billed


def test_stream_merge_counts_the_compaction_pass_once():
    top = {k: v for k, v in MESSAGE.items() if k != "type"}
    start = {**top, "output_tokens": 1, "iterations": [COMPACTION]}  # message_start: the compaction entry
    want = (11520, 3000, 500, 1000)
    for delta in (
        {"output_tokens": 300, "iterations": [MESSAGE]},  # message_delta: only the final message
        {"output_tokens": 300, "iterations": [COMPACTION, MESSAGE]},  # or repeating the pass
        {"output_tokens": 300},
    ):  # or without iterations
        u = merge_anthropic_stream(start, delta)
        assert (u.input_tokens, u.cached_tokens, u.cache_write_tokens, u.output_tokens) == want, delta
        assert u.drift == ()
    plain = merge_anthropic_stream(
        top | {"output_tokens": 1}, {"output_tokens": 300, "iterations": [MESSAGE]}
    )
    assert (plain.input_tokens, plain.output_tokens) == (1520, 300)


@pytest.mark.parametrize(
    "parse, block, note",
    [
        (
            from_openai_chat,
            {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0, "cache_hit_tokens": 3}},
            "prompt_tokens_details.cache_hit_tokens:unknown_field",
        ),
        (
            from_openai_chat,
            {"prompt_tokens": 10, "cache_discount_tokens": 3},
            "cache_discount_tokens:unknown_field",
        ),
        (
            from_openai_chat,
            {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 150}},
            "cached_tokens:above_prompt",
        ),
        (
            from_openai_chat,
            {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 50, "cache_write_tokens": 80}},
            "cache_write_tokens:above_prompt",
        ),
        (
            from_openai_responses,
            {
                "input_tokens": 100,
                "input_tokens_details": {
                    "cached_tokens": 0,
                    "cache_write_tokens": 60,
                    "cache_write_tokens_details": {
                        "ttl_30m_tokens": 10,
                        "ttl_12h_tokens": 50,
                        "ttl_1w_tokens": 3,
                    },
                },
            },
            "input_tokens_details.cache_write_tokens_details.ttl_1w_tokens:unknown_field",
        ),
        (
            from_openai_responses,
            {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 20}},
            "cached_tokens:above_prompt",
        ),
        (
            from_anthropic,
            {
                "input_tokens": 5,
                "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_24h_input_tokens": 4},
            },
            "cache_creation.ephemeral_24h_input_tokens:unknown_field",
        ),  # a new TTL: every key of cache_creation is a cache count
        (
            from_anthropic,
            {"input_tokens": 5, "cache_warm_input_tokens": 4},
            "cache_warm_input_tokens:unknown_field",
        ),
        (
            from_anthropic,
            {"input_tokens": 5, "iterations": [{"type": "speculative_draft", "input_tokens": 3}]},
            "iterations[speculative_draft]:unknown_type",
        ),
        (from_anthropic, {"input_tokens": 5, "iterations": [7]}, "iterations[0]:unknown_type"),
        (from_anthropic, {"input_tokens": 5, "iterations": {"compaction": 1}}, "iterations:unknown_shape"),
        (
            from_anthropic,
            {
                "input_tokens": 5,
                "iterations": [{"type": "compaction", "input_tokens": 1, "cache_x_tokens": 2}],
            },
            "iterations.cache_x_tokens:unknown_field",
        ),
        (
            from_gemini,
            {"promptTokenCount": 10, "cachedContentTokenCount": 20},
            "cachedContentTokenCount:above_prompt",
        ),
        (
            from_gemini,
            {"promptTokenCount": 10, "implicitCacheHitTokenCount": 2},
            "implicitCacheHitTokenCount:unknown_field",
        ),
    ],
)
def test_what_the_rules_do_not_expect_is_drift_and_never_raises(parse, block, note):
    u = parse(block)
    assert note in u.drift and u.flags == ()


def test_drift_survives_addition_and_12h_too():
    a = Usage(10, 0, 5, 0, 1, cache_write_12h_tokens=4, drift=("x:unknown_field",))
    total = a + Usage(10, 0, 5, 0, 1, cache_write_12h_tokens=1, drift=("x:unknown_field", "y:above_prompt"))
    assert total.cache_write_12h_tokens == 5 and total.drift == ("x:unknown_field", "y:above_prompt")
    with pytest.raises(ValueError):
        Usage(10, 0, 5, 2, 1, cache_write_12h_tokens=4)  # 1h + 12h above the writes


def test_stream_merge_keeps_the_drift_of_message_start_iterations_the_delta_replaces():
    # message_start carries the server-side passes; message_delta only the final message. An entry
    # of a type the rules do not know, or an iterations block of another shape, seen in
    # message_start is drift even when message_delta lists its own iterations.
    top = {k: v for k, v in MESSAGE.items() if k != "type"}
    delta = {"output_tokens": 300, "iterations": [MESSAGE]}
    odd = merge_anthropic_stream(
        {**top, "iterations": [COMPACTION, {"type": "speculative_draft", "input_tokens": 40}]}, delta
    )
    assert "iterations[speculative_draft]:unknown_type" in odd.drift
    assert (odd.input_tokens, odd.output_tokens) == (11520, 1000)  # the compaction pass still counted once
    shape = merge_anthropic_stream({**top, "iterations": {"type": "compaction", "input_tokens": 9000}}, delta)
    assert (
        "iterations:unknown_shape" in shape.drift
    )  # a pass in a shape not understood: not priced without it
    clean = merge_anthropic_stream({**top, "iterations": [COMPACTION]}, delta)
    assert clean.drift == ()
