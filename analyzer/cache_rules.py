"""The providers' prompt-caching rules the money layer reasons with.

- OpenAI: prompts of at least 1024 tokens are cached automatically, read in 128-token
  steps, and an unused prefix lives 5–10 minutes (600 s is taken).
- Anthropic: only up to ``cache_control`` breakpoints; a per-model minimum prefix length;
  a 5-minute TTL, or 1 hour with ``ttl: "1h"``.

:func:`missed_tokens` applies them to say how many tokens of a repeated prefix the
provider could have read from its cache but did not. Token counts are the byte-based
estimate of :mod:`analyzer.tokens`. This module knows no prices (see :mod:`analyzer.cost`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from analyzer.segments import ANTHROPIC, Segment
from analyzer.tokens import estimate_tokens

if TYPE_CHECKING:
    from analyzer.diagnose import Seen

OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
OPENAI_TTL_S = 600.0  # "5 to 10 minutes of inactivity" (up to an hour off-peak)
ANTHROPIC_TTL_S = {"5m": 300.0, "1h": 3600.0}


# Anthropic's minimum cacheable prefix per model family (tokens; longest matching name
# prefix wins), the same table the upstream emulator applies; 1024 for the rest.
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-opus-5": 512, "claude-fable-5": 512, "claude-mythos-5": 512,
    "claude-opus-4-7": 4096, "claude-opus-4-6": 4096, "claude-opus-4-5": 4096, "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048, "claude-3-haiku": 2048,
}
ANTHROPIC_DEFAULT_MIN_TOKENS = 1024


def min_cacheable_tokens(provider: str, model: str) -> int:
    """The shortest prompt prefix the provider caches (Anthropic: per model family)."""
    if provider != ANTHROPIC:
        return OPENAI_MIN_TOKENS
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in ANTHROPIC_MIN_TOKENS if name.startswith(p)), key=len, default="")
    return ANTHROPIC_MIN_TOKENS[best] if best else ANTHROPIC_DEFAULT_MIN_TOKENS


def provider_ttl_s(provider: str, segments: Sequence[Segment]) -> float:
    if provider != ANTHROPIC:
        return OPENAI_TTL_S
    ttls = [ANTHROPIC_TTL_S[s.cache_control] for s in segments if s.cache_control in ANTHROPIC_TTL_S]
    return max(ttls, default=ANTHROPIC_TTL_S["5m"])


def missed_tokens(cur: Seen, repeated_segments: int, cached_tokens: int, elapsed_s: float | None) -> int:
    """Tokens of the repeated prefix the provider could have read from its cache but did not.

    Counted only when the prefix repeated within the provider's TTL and reaches its
    minimum; OpenAI's 128-token steps are applied, and a shortfall under one step is taken
    as the rounding of the byte-based token estimate, not a miss.
    """
    if repeated_segments <= 0:
        return 0
    ttl = provider_ttl_s(cur.provider, cur.segments)
    if elapsed_s is not None and elapsed_s > ttl:
        return 0
    repeated = estimate_tokens(sum(len(s.data) for s in cur.segments[:repeated_segments]))
    minimum = min_cacheable_tokens(cur.provider, cur.model)
    if repeated < minimum:
        return 0
    if cur.provider != ANTHROPIC:
        repeated = minimum + (repeated - minimum) // OPENAI_STEP_TOKENS * OPENAI_STEP_TOKENS
    shortfall = repeated - cached_tokens
    return shortfall if shortfall >= OPENAI_STEP_TOKENS else 0
