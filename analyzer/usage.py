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

This module parses numbers only; prices live in :mod:`analyzer.pricing`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("input_tokens", "cached_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens"):
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
        return asdict(self)

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.output_tokens + other.output_tokens,
        )


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return max(0, int(value))


def from_openai_chat(u: Mapping[str, Any]) -> Usage:
    """Chat Completions / Completions usage (also DeepSeek's and Groq's OpenAI-compatible ones)."""
    prompt = _int(u.get("prompt_tokens"))
    details = u.get("prompt_tokens_details") or {}
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    if "prompt_cache_hit_tokens" in u:  # DeepSeek
        cached = _int(u.get("prompt_cache_hit_tokens"))
        prompt = prompt or cached + _int(u.get("prompt_cache_miss_tokens"))
    return Usage(
        input_tokens=prompt,
        cached_tokens=min(cached, prompt),
        output_tokens=_int(u.get("completion_tokens")),
    )


def from_openai_responses(u: Mapping[str, Any]) -> Usage:
    """Responses API usage: ``input_tokens`` includes ``input_tokens_details.cached_tokens``."""
    prompt = _int(u.get("input_tokens"))
    details = u.get("input_tokens_details") or {}
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    return Usage(input_tokens=prompt, cached_tokens=min(cached, prompt), output_tokens=_int(u.get("output_tokens")))


def from_anthropic(u: Mapping[str, Any]) -> Usage:
    """Messages API usage: ``input_tokens`` excludes cache reads and writes, so they are added."""
    plain = _int(u.get("input_tokens"))
    read = _int(u.get("cache_read_input_tokens"))
    write = _int(u.get("cache_creation_input_tokens"))
    write_1h = 0
    creation = u.get("cache_creation")
    if isinstance(creation, Mapping):
        write_1h = _int(creation.get("ephemeral_1h_input_tokens"))
        write = max(write, write_1h + _int(creation.get("ephemeral_5m_input_tokens")))
    return Usage(
        input_tokens=plain + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=min(write_1h, write),
        output_tokens=_int(u.get("output_tokens")),
    )


def from_gemini(u: Mapping[str, Any]) -> Usage:
    """Gemini ``usageMetadata``: ``promptTokenCount`` includes ``cachedContentTokenCount``."""
    prompt = _int(u.get("promptTokenCount"))
    cached = _int(u.get("cachedContentTokenCount"))
    output = _int(u.get("candidatesTokenCount")) + _int(u.get("thoughtsTokenCount"))
    return Usage(input_tokens=prompt, cached_tokens=min(cached, prompt), output_tokens=output)


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
