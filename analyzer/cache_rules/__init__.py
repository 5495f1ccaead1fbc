"""The providers' prompt-caching rules, as data and small pure functions: the one copy.

The emulator (:mod:`proxy.emulator`), ``prefixgate analyze``, the lint rules and the money layer
all read what a provider caches here; a named upstream picks its rules by one of :data:`RULES`
(:func:`rules_for`). The assumptions per provider are listed in the comment block below.

It does NOT know prices (see :mod:`analyzer.cost`), format anything or keep state; token counts
are the byte-based estimate of :mod:`analyzer.tokens`. See docs/providers.md for the rest.
"""

# Provider contract assumptions (sources and dates as read; the emulator, analyze, lint and money all follow these):
# - OpenAI, per model generation (:mod:`.openai` holds the families and their assumptions):
#   before GPT-5.6, prompts of at least 1,024 tokens are cached automatically and read in
#   128-token steps (1024, 1152, …), writes free; an unused prefix is evicted after 5–10 minutes
#   of inactivity (up to an hour off-peak), 24 h with ``prompt_cache_retention: "24h"``.
#   GPT-5.6 and later cache only at breakpoints (an implicit one at the newest message and
#   ``prompt_cache_breakpoint`` parts), match exactly there, bill writes at 1.25× input and keep
#   entries at least 30 minutes (``12h`` on request). (OpenAI, "Prompt caching" guide,
#   https://developers.openai.com/api/docs/guides/prompt-caching.)
# - Anthropic: only prefixes ending at a ``cache_control`` breakpoint are cached, at most
#   4 per request; a breakpoint also looks back over the 20 block boundaries before it;
#   TTL 5 minutes (refreshed on each hit) or 1 hour with ``ttl: "1h"``. The prefix must
#   reach the model's minimum cacheable prompt length (Anthropic, "Prompt caching",
#   https://platform.claude.com/docs/en/build-with-claude/prompt-caching, limitations;
#   "What's new in Claude Opus 4.8" and "What's new in Claude Opus 5" for the later
#   models; checked 2026-11):
#
#   - 4,096 tokens: Opus 4.5, Opus 4.6, Opus 4.7, Haiku 4.5 (Opus 4.7 not in the excerpt
#     read; 4,096 as in write-ups that quote the docs table of 2026-06, one other says 2,048);
#   - 2,048 tokens: Haiku 3.5, Haiku 3;
#   - 1,024 tokens: Opus 4.8, Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4,
#     Sonnet 3.7, and every model not listed;
#   - 512 tokens: Opus 5 (lowered from Opus 4.8's 1,024), Fable 5, Mythos 5.
#
#   The longest matching model-name prefix wins, so dated snapshots and point releases
#   (``claude-opus-5-5``) inherit their family's figure.
# - Gemini: implicit caching, automatic on Gemini 2.5 and newer models, no breakpoints;
#   ``cachedContentTokenCount`` (inside ``promptTokenCount``) says what was read from a
#   cache. Minimum prompt per model (Google AI for Developers, "Context caching", table of
#   2026-10-13, https://ai.google.dev/gemini-api/docs/caching): 2,048 tokens for Gemini 2.5
#   Flash and 2.5 Pro; 4,096 for Gemini 3.x (3.1 Pro, 3.5–3.8 Flash), Gemini 4 and every model
#   not listed. Google publishes neither the granularity of a hit nor how long an implicit
#   entry lives ("send requests with similar prefix in a short amount of time"): the rules
#   here count any length from the minimum (step 1) and keep a prefix 5 minutes, the shortest
#   TTL any other provider documents. Explicit ``cachedContents`` default to 1 hour.
# - DeepSeek: context caching on disk, automatic for every request; a later request hits a
#   persisted prefix unit it matches in full (DeepSeek API docs, "Context Caching",
#   https://api-docs.deepseek.com/guides/kv_cache). Taken here as automatic from 64 tokens in
#   64-token units (the unit of the docs' earlier edition), kept an hour (the docs: unused
#   entries are cleared within "a few hours to a few days").
#
# - xAI and Mistral: OpenAI-compatible, automatic caching taken as OpenAI's before 5.6; what
#   differs is the routing hint each reads (xAI: ``x-grok-conv-id`` header on Chat Completions,
#   ``prompt_cache_key`` on Responses; Mistral: ``prompt_cache_key``), set by the ``safe`` rewrite.

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.cache_rules import openai as openai_rules
from analyzer.segments import ANTHROPIC, Segment
from analyzer.tokens import estimate_tokens

if TYPE_CHECKING:
    from analyzer.segments import Seen

OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
#: "5 to 10 minutes of inactivity"
OPENAI_TTL_RANGE_S = (300.0, 600.0)
#: eviction at the latest (emulator, missed-savings check)
OPENAI_TTL_S = OPENAI_TTL_RANGE_S[1]
#: prompt_cache_retention: "24h"
OPENAI_EXTENDED_TTL_S = 24 * 3600.0

ANTHROPIC_TTL_S = {"5m": 300.0, "1h": 3600.0}
ANTHROPIC_MAX_BREAKPOINTS = 4
ANTHROPIC_LOOKBACK_BLOCKS = 20
ANTHROPIC_DEFAULT_MIN_TOKENS = 1024
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-opus-5": 512,
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    "claude-opus-4-7": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}


GEMINI = "gemini"
DEEPSEEK = "deepseek"
#: implicit caching: undocumented, see above
GEMINI_TTL_S = 300.0
#: cachedContents without a ttl
GEMINI_EXPLICIT_TTL_S = 3600.0
GEMINI_DEFAULT_MIN_TOKENS = 4096
GEMINI_MIN_TOKENS: dict[str, int] = {"gemini-2.5-flash": 2048, "gemini-2.5-pro": 2048}
DEEPSEEK_MIN_TOKENS = 64
DEEPSEEK_STEP_TOKENS = 64
DEEPSEEK_TTL_S = 3600.0
XAI = "xai"
MISTRAL = "mistral"
#: the names a named upstream's ``rules`` may take
RULES = ("openai", ANTHROPIC, GEMINI, DEEPSEEK, XAI, MISTRAL)


@dataclass(frozen=True)
class CacheRules:
    """One provider's rules for one model."""

    provider: str
    min_tokens: int
    #: cached length is rounded down to min + k·step
    step_tokens: int
    #: None: caching is automatic, there are no breakpoints
    max_breakpoints: int | None
    #: default time an unused prefix stays cached
    ttl_s: float
    #: needs cache_control breakpoints
    explicit: bool
    #: caches only at breakpoints (Anthropic; OpenAI GPT-5.6+, which adds an implicit one)
    breakpoints: bool = False
    #: cache writes over the input rate (1.0: free, billed as input)
    write_multiplier: float = 1.0


OPENAI_RULES = CacheRules("openai", OPENAI_MIN_TOKENS, OPENAI_STEP_TOKENS, None, OPENAI_TTL_S, False)
OPENAI_56_RULES = CacheRules(
    "openai",
    openai_rules.MIN_TOKENS,
    1,
    openai_rules.MAX_WRITES,
    openai_rules.TTL_S[openai_rules.DEFAULT_TTL],
    False,
    True,
    openai_rules.WRITE_MULTIPLIER,
)
DEEPSEEK_RULES = CacheRules(DEEPSEEK, DEEPSEEK_MIN_TOKENS, DEEPSEEK_STEP_TOKENS, None, DEEPSEEK_TTL_S, False)


def _longest_prefix(table: dict[str, int], model: str, default: int) -> int:
    name = (model or "").lower().rsplit("/", 1)[-1]  # "models/gemini-2.5-flash", "vendor/claude-…"
    best = max((p for p in table if name.startswith(p)), key=len, default="")
    return table[best] if best else default


def anthropic_min_tokens(model: str) -> int:
    """Anthropic's minimum cacheable prefix for ``model`` (``vendor/`` prefixes and case ignored)."""
    return _longest_prefix(ANTHROPIC_MIN_TOKENS, model, ANTHROPIC_DEFAULT_MIN_TOKENS)


def gemini_min_tokens(model: str) -> int:
    """Gemini's minimum prompt for implicit caching (``models/`` prefixes and case ignored)."""
    return _longest_prefix(GEMINI_MIN_TOKENS, model, GEMINI_DEFAULT_MIN_TOKENS)


def gemini_implicit(model: str) -> bool:
    """True for the models with implicit caching: Gemini 2.5 and newer (not 1.x or 2.0)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    return not name.startswith(("gemini-1", "gemini-2.0", "gemini-pro", "gemini-ultra"))


def rules_for(provider: str, model: str) -> CacheRules:
    """The rules of ``provider`` (a protocol, or a name in :data:`RULES`) for ``model``;
    any other name gets OpenAI's (automatic caching is the common case). OpenAI's depend on
    the model's generation (:func:`analyzer.cache_rules.openai.generation`)."""
    if provider == ANTHROPIC:
        return CacheRules(
            ANTHROPIC,
            anthropic_min_tokens(model),
            1,
            ANTHROPIC_MAX_BREAKPOINTS,
            ANTHROPIC_TTL_S["5m"],
            True,
            True,
            1.25,
        )
    if provider == GEMINI:
        return CacheRules(GEMINI, gemini_min_tokens(model), 1, None, GEMINI_TTL_S, False)
    if provider == DEEPSEEK:
        return DEEPSEEK_RULES
    if provider == "openai" and openai_rules.uses_breakpoints(model):
        return OPENAI_56_RULES
    return OPENAI_RULES


def min_cacheable_tokens(provider: str, model: str) -> int:
    """The shortest prompt prefix the provider caches (Anthropic: per model family)."""
    return rules_for(provider, model).min_tokens


def cacheable_tokens(rules: CacheRules, prefix_bytes: int) -> int:
    """Tokens of a ``prefix_bytes`` prefix the provider could serve from cache (0 below the minimum)."""
    tokens = estimate_tokens(prefix_bytes)
    if tokens < rules.min_tokens:
        return 0
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.step_tokens * rules.step_tokens


def provider_ttl_s(provider: str, segments: Sequence[Segment], model: str = "") -> float:
    """How long the provider keeps a prefix these segments cache (Anthropic and OpenAI 5.6+:
    the longest breakpoint TTL)."""
    if provider == ANTHROPIC:
        ttls = [ANTHROPIC_TTL_S[s.cache_control] for s in segments if s.cache_control in ANTHROPIC_TTL_S]
        return max(ttls, default=ANTHROPIC_TTL_S["5m"])
    rules = rules_for(provider, model)
    if rules is OPENAI_56_RULES:
        ttls = [
            openai_rules.TTL_S[s.cache_control] for s in segments if s.cache_control in openai_rules.TTL_S
        ]
        return max(ttls, default=rules.ttl_s)
    return rules.ttl_s


def missed_tokens(cur: Seen, repeated_segments: int, cached_tokens: int, elapsed_s: float | None) -> int:
    """Tokens of the repeated prefix the provider could have read from its cache but did not.

    Counted only when the prefix repeated within the provider's TTL and reaches its
    minimum; OpenAI's 128-token steps are applied, and a shortfall under one step is taken
    as the rounding of the byte-based token estimate, not a miss.
    """
    if repeated_segments <= 0:
        return 0
    if elapsed_s is not None and elapsed_s > provider_ttl_s(cur.provider, cur.segments, cur.model):
        return 0
    repeated_bytes = sum(len(s.data) for s in cur.segments[:repeated_segments])
    repeated = cacheable_tokens(rules_for(cur.provider, cur.model), repeated_bytes)
    if repeated == 0:
        return 0
    shortfall = repeated - cached_tokens
    return shortfall if shortfall >= OPENAI_STEP_TOKENS else 0
