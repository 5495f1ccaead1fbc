"""Every provider's usage block, normalised into one :class:`Usage`.

Definitions (the same for every provider):

- ``input_tokens``: every prompt token the model read, *including* cached reads and cache
  writes. OpenAI, DeepSeek and Gemini report it this way (cached tokens are counted inside
  the prompt total); Anthropic does not (its ``input_tokens`` excludes cache reads and
  writes), so Anthropic numbers are summed here.
- ``cached_tokens``: prompt tokens served from the provider's prompt cache (cache read).
- ``cache_write_tokens``: prompt tokens written to the cache (Anthropic only), of which
  ``cache_write_1h_tokens`` were written with the 1-hour TTL; the rest used 5 minutes.
- ``output_tokens``: generated tokens (reasoning included where the provider counts it).

**Sanitising (the one place).** Every number the proxy accounts with comes through the
parsers below, so this is where an upstream's absurd numbers stop: a count that is missing or
``null`` is 0 (no flag); one that is not a number (a string, a bool, NaN, ±inf), negative, or
above :data:`MAX_TOKENS` becomes 0 (or :data:`MAX_TOKENS` when too large) and is named in
``Usage.flags`` (``"usage.<field>:<why>"``, e.g. ``"usage.completion_tokens:too_large"``).
Sums (Anthropic's input total, DeepSeek's hit + miss, Gemini's output) are capped the same
way. :data:`MAX_TOKENS` is 10⁹: a hundred times the largest context any model offers, so
no real count is ever clamped, and small enough that sums over billions of requests stay
inside SQLite's signed 64-bit ``SUM`` and orjson's integers. A flagged usage is priced
null (:func:`analyzer.cost.cost_of`: money is exact or null) and the ledger stores its flags.

This module parses numbers only; prices live in :mod:`analyzer.pricing`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

MAX_TOKENS = 10**9  # see "Sanitising" above
_FIELDS = ("input_tokens", "cached_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens")


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0
    flags: tuple[str, ...] = ()  # what the parser had to change (empty: every number as reported)

    def __post_init__(self) -> None:
        for name in _FIELDS:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.cache_write_1h_tokens > self.cache_write_tokens:
            raise ValueError("cache_write_1h_tokens cannot exceed cache_write_tokens")

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens billed at the plain input rate."""
        return max(0, self.input_tokens - self.cached_tokens - self.cache_write_tokens)

    @property
    def cache_write_5m_tokens(self) -> int:
        return self.cache_write_tokens - self.cache_write_1h_tokens

    def to_dict(self) -> dict[str, int]:
        """The five counts (not the flags)."""
        return {name: getattr(self, name) for name in _FIELDS}

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.output_tokens + other.output_tokens,
            tuple(dict.fromkeys(self.flags + other.flags)),
        )


class _Reader:
    """Reads the token counts of one usage block, noting each value it had to change."""

    __slots__ = ("flags",)

    def __init__(self) -> None:
        self.flags: list[str] = []

    def __call__(self, block: Any, key: str) -> int:
        if not isinstance(block, Mapping):
            return 0
        value = block.get(key)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self._flag(key, "not_a_number", 0)
        if isinstance(value, float):
            if not math.isfinite(value):
                return self._flag(key, "not_a_number", 0)
            if value < 0:
                return self._flag(key, "negative", 0)
            if value > MAX_TOKENS:
                return self._flag(key, "too_large", MAX_TOKENS)
            if not value.is_integer():
                return self._flag(key, "not_an_integer", int(value))
            return int(value)
        if value < 0:
            return self._flag(key, "negative", 0)
        if value > MAX_TOKENS:
            return self._flag(key, "too_large", MAX_TOKENS)
        return int(value)  # an int subclass becomes a plain int

    def _flag(self, key: str, why: str, value: int) -> int:
        self.flags.append(f"usage.{key}:{why}")
        return value

    def usage(self, **counts: int) -> Usage:
        """The :class:`Usage`, with sums capped at :data:`MAX_TOKENS` and the flags attached."""
        for name, value in counts.items():
            if value > MAX_TOKENS:
                counts[name] = self._flag(name, "too_large", MAX_TOKENS)
        return Usage(**counts, flags=tuple(dict.fromkeys(self.flags)))


def from_openai_chat(u: Mapping[str, Any]) -> Usage:
    """Chat Completions / Completions usage (also DeepSeek's and Groq's OpenAI-compatible ones)."""
    n = _Reader()
    prompt = n(u, "prompt_tokens")
    cached = n(u.get("prompt_tokens_details"), "cached_tokens")
    if "prompt_cache_hit_tokens" in u:  # DeepSeek
        cached = n(u, "prompt_cache_hit_tokens")
        prompt = prompt or cached + n(u, "prompt_cache_miss_tokens")
    return n.usage(input_tokens=prompt, cached_tokens=min(cached, prompt), output_tokens=n(u, "completion_tokens"))


def from_openai_responses(u: Mapping[str, Any]) -> Usage:
    """Responses API usage: ``input_tokens`` includes ``input_tokens_details.cached_tokens``."""
    n = _Reader()
    prompt = n(u, "input_tokens")
    cached = n(u.get("input_tokens_details"), "cached_tokens")
    return n.usage(input_tokens=prompt, cached_tokens=min(cached, prompt), output_tokens=n(u, "output_tokens"))


def from_anthropic(u: Mapping[str, Any]) -> Usage:
    """Messages API usage: ``input_tokens`` excludes cache reads and writes, so they are added."""
    n = _Reader()
    plain = n(u, "input_tokens")
    read = n(u, "cache_read_input_tokens")
    write = n(u, "cache_creation_input_tokens")
    write_1h = 0
    creation = u.get("cache_creation")
    if isinstance(creation, Mapping):
        write_1h = n(creation, "ephemeral_1h_input_tokens")
        write = max(write, write_1h + n(creation, "ephemeral_5m_input_tokens"))
    return n.usage(
        input_tokens=plain + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=min(write_1h, write),
        output_tokens=n(u, "output_tokens"),
    )


def from_gemini(u: Mapping[str, Any]) -> Usage:
    """Gemini ``usageMetadata``: ``promptTokenCount`` includes ``cachedContentTokenCount``
    (implicit and explicit cache reads alike); ``toolUsePromptTokenCount`` (what a tool such
    as search fed back) is billed as input too, and ``thoughtsTokenCount`` as output."""
    n = _Reader()
    prompt = n(u, "promptTokenCount") + n(u, "toolUsePromptTokenCount")
    cached = n(u, "cachedContentTokenCount")
    output = n(u, "candidatesTokenCount") + n(u, "thoughtsTokenCount")
    return n.usage(input_tokens=prompt, cached_tokens=min(cached, prompt), output_tokens=output)


def merge_anthropic_stream(start: Mapping[str, Any] | None, delta: Mapping[str, Any] | None) -> Usage:
    """Anthropic streams split usage: ``message_start`` has input and cache numbers,
    ``message_delta`` the (cumulative) output count and, in newer API versions, may repeat
    the input numbers. Later values win field by field."""
    merged: dict[str, Any] = dict(start or {})
    for key, value in (delta or {}).items():
        if value is not None:
            merged[key] = value
    return from_anthropic(merged)


def from_any(u: Mapping[str, Any]) -> Usage | None:
    """Recognise a usage block by its field names (for logs of unknown origin)."""
    if not isinstance(u, Mapping):
        return None
    if "promptTokenCount" in u:
        return from_gemini(u)
    if "prompt_tokens" in u or "prompt_cache_hit_tokens" in u:
        return from_openai_chat(u)
    if "cache_read_input_tokens" in u or "cache_creation_input_tokens" in u:
        return from_anthropic(u)
    if "input_tokens_details" in u:
        return from_openai_responses(u)
    if "input_tokens" in u:
        # Ambiguous: Anthropic and Responses both say input_tokens; without cache fields
        # the two readings agree.
        return from_anthropic(u)
    return None
