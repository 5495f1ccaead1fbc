"""Provider caching rules as data: minimums per model, OpenAI's 128-token steps."""

from __future__ import annotations

import pytest

from analyzer.cache_rules import (
    OPENAI_RULES,
    OPENAI_TTL_S,
    anthropic_min_tokens,
    cacheable_tokens,
    min_cacheable_tokens,
    provider_ttl_s,
    rules_for,
)
from analyzer.segments import Segment


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-opus-4-5-20251101", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-opus-5", 512),
        ("claude-opus-4-1", 1024),
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-6", 1024),
        ("claude-3-7-sonnet-20250219", 1024),
        ("claude-haiku-4-5", 4096),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-3-haiku-20240307", 2048),
        ("", 1024),
    ],
)
def test_anthropic_minimums(model, minimum):
    assert anthropic_min_tokens(model) == minimum
    assert rules_for("anthropic", model).min_tokens == minimum


def test_openai_minimum_and_128_token_steps():
    assert rules_for("openai", "gpt-4o") is OPENAI_RULES
    assert cacheable_tokens(OPENAI_RULES, 4 * 1023) == 0
    assert cacheable_tokens(OPENAI_RULES, 4 * 1024) == 1024
    assert cacheable_tokens(OPENAI_RULES, 4 * 1151) == 1024
    assert cacheable_tokens(OPENAI_RULES, 4 * 1152) == 1152
    assert cacheable_tokens(OPENAI_RULES, 4 * 5000) == 1024 + (5000 - 1024) // 128 * 128


def test_anthropic_counts_every_token_past_the_minimum():
    rules = rules_for("anthropic", "claude-sonnet-4-5")
    assert cacheable_tokens(rules, 4 * 1023) == 0 and cacheable_tokens(rules, 4 * 1500) == 1500


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-opus-4-8", 1024),
        ("claude-opus-5-5", 512),
        ("claude-fable-5-1", 512),
        ("anthropic/Claude-Haiku-4-5", 4096),
        ("claude-sonnet-5", 1024),
    ],
)
def test_later_models_snapshots_and_vendor_prefixes(model, minimum):
    assert min_cacheable_tokens("anthropic", model) == minimum


def test_providers_differ_in_breakpoints_and_ttl():
    anthropic = rules_for("anthropic", "claude-sonnet-4-5")
    assert (anthropic.max_breakpoints, anthropic.explicit, anthropic.step_tokens) == (4, True, 1)
    assert (OPENAI_RULES.max_breakpoints, OPENAI_RULES.explicit) == (None, False)
    assert min_cacheable_tokens("openai", "claude-opus-5") == 1024  # the provider decides, not the name
    one_hour = [
        Segment("system", "system[0]", b"x", "1h", "system"),
        Segment("system", "system[1]", b"y", "5m", "system"),
    ]
    assert provider_ttl_s("anthropic", one_hour) == 3600.0
    assert provider_ttl_s("anthropic", []) == 300.0
    assert provider_ttl_s("openai", one_hour) == OPENAI_TTL_S


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("gemini-2.5-flash", 2048),
        ("gemini-2.5-flash-lite", 2048),
        ("models/gemini-2.5-pro", 2048),
        ("gemini-3.1-pro-preview", 4096),
        ("gemini-3.5-flash", 4096),
        ("gemini-4-argon", 4096),
        ("", 4096),
    ],
)
def test_gemini_minimums(model, minimum):
    assert min_cacheable_tokens("gemini", model) == minimum


def test_gemini_and_deepseek_rules_are_automatic():
    from analyzer.cache_rules import RULES, gemini_implicit

    gemini, deepseek = rules_for("gemini", "gemini-2.5-flash"), rules_for("deepseek", "deepseek-chat")
    assert (gemini.max_breakpoints, gemini.explicit, gemini.step_tokens, gemini.ttl_s) == (
        None,
        False,
        1,
        300.0,
    )
    assert (deepseek.min_tokens, deepseek.step_tokens, deepseek.explicit) == (64, 64, False)
    assert cacheable_tokens(deepseek, 4 * 200) == 192  # 64-token units
    assert provider_ttl_s("gemini", []) == 300.0 and provider_ttl_s("deepseek", []) == 3600.0
    assert set(RULES) == {"openai", "anthropic", "gemini", "deepseek", "xai", "mistral"}
    assert rules_for("xai", "grok-4") is OPENAI_RULES  # any other name: automatic caching, OpenAI's numbers
    assert gemini_implicit("gemini-2.5-flash") and gemini_implicit("gemini-3.5-flash")
    assert not gemini_implicit("gemini-2.0-flash") and not gemini_implicit("gemini-1.5-pro")


def test_openai_generations_by_model_name():
    from analyzer.cache_rules import OPENAI_56_RULES
    from analyzer.cache_rules.openai import generation, uses_breakpoints, version

    newer = [
        "gpt-5.6-terra",
        "gpt-5.6",
        "openai/gpt-5.6-luna",
        "GPT-5.6-SOL-2026-07-09",
        "gpt-5.7",
        "gpt-5.10",
        "gpt-6",
        "gpt-6.1-terra",
        "azure/gpt-6.2-sol",
        "gpt-56-terra",
    ]
    older = [
        "gpt-5.5",
        "gpt-5",
        "gpt-5-mini",
        "gpt-4.1-mini",
        "gpt-4o",
        "gpt-4",
        "gpt-35-turbo",
        "o4-mini",
        "chatgpt-4o-latest",
        "gpt-oss-120b",
        "my-azure-deployment",
        "",
        None,
    ]
    assert [m for m in newer if not uses_breakpoints(m)] == []
    assert [m for m in older if uses_breakpoints(m)] == []
    assert (
        version("gpt-35-turbo") == (3, 5)
        and version("gpt-6.1-terra") == (6, 1)
        and version("o4-mini") is None
    )
    assert generation("gpt-9.9").name == "gpt-5.6+"  # newer than the newest known family: the newest rules
    assert (
        rules_for("openai", "gpt-5.6-terra") is OPENAI_56_RULES
        and rules_for("openai", "gpt-5.5") is OPENAI_RULES
    )
    assert (
        rules_for("xai", "gpt-5.6-terra") is OPENAI_RULES
    )  # xAI's and Mistral's automatic caching is not OpenAI's 5.6


def test_gpt56_caches_any_length_from_the_minimum_and_keeps_30_minutes_or_12_hours():
    from analyzer.cache_rules import OPENAI_56_RULES
    from analyzer.segments import Segment

    assert cacheable_tokens(OPENAI_56_RULES, 4 * 1023) == 0
    assert cacheable_tokens(OPENAI_56_RULES, 4 * 1100) == 1100  # no 128-token steps
    marked = [Segment("message", "messages[0]", b"x", cache_control="12h")]
    assert provider_ttl_s("openai", [], "gpt-5.6-sol") == 1800.0
    assert provider_ttl_s("openai", marked, "gpt-5.6-sol") == 12 * 3600.0
    assert provider_ttl_s("openai", marked, "gpt-4o") == OPENAI_RULES.ttl_s
