"""Each provider's prompt-caching rules, as data: minimum prefix, step, breakpoints, TTL.

- OpenAI: automatic prefix caching from 1,024 tokens, then in 128-token steps; entries
  live 5–10 minutes idle (up to an hour off-peak); no breakpoints.
- Anthropic: explicit ``cache_control`` breakpoints, at most 4 per request; the prefix up
  to a breakpoint must reach the model's minimum: 4,096 tokens for Opus 4.5+ and Haiku
  4.5+, 2,048 for Sonnet 4.6+ and the Haiku 3 family, 1,024 for older Sonnet/Opus (per
  Anthropic's prompt-caching docs; later versions inherit their family's latest figure);
  TTL 5 minutes (refreshed on each hit) or 1 hour.

Token counts are estimates (:mod:`analyzer.tokens`). This module holds no prices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.tokens import estimate_tokens


@dataclass(frozen=True)
class CacheRules:
    provider: str
    min_tokens: int
    step_tokens: int  # cached length is rounded down to min + k·step
    max_breakpoints: int | None
    ttl_s: float
    explicit: bool  # needs cache_control breakpoints


OPENAI_RULES = CacheRules("openai", 1024, 128, None, 300.0, False)
ANTHROPIC_BREAKPOINTS = 4


def _version(model: str) -> tuple[int, ...]:
    """(4, 5) for claude-opus-4-5-20251101, (3, 5) for claude-3-5-haiku; dates are skipped."""
    nums = [int(n) for n in re.findall(r"(?<![\d])\d{1,2}(?![\d])", model)]
    return tuple(nums[:2]) or (0,)


def anthropic_min_tokens(model: str) -> int:
    m = (model or "").lower()
    version = _version(m)
    if "opus" in m:
        return 4096 if version >= (4, 5) else 1024
    if "sonnet" in m:
        return 2048 if version >= (4, 6) else 1024
    if "haiku" in m:
        return 4096 if version >= (4, 5) else 2048
    return 1024


def rules_for(provider: str, model: str) -> CacheRules:
    if provider == "anthropic":
        return CacheRules("anthropic", anthropic_min_tokens(model), 1, ANTHROPIC_BREAKPOINTS, 300.0, True)
    return OPENAI_RULES


def cacheable_tokens(rules: CacheRules, prefix_bytes: int) -> int:
    """Tokens of a ``prefix_bytes`` prefix the provider could serve from cache (0 below the minimum)."""
    tokens = estimate_tokens(prefix_bytes)
    if tokens < rules.min_tokens:
        return 0
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.step_tokens * rules.step_tokens
