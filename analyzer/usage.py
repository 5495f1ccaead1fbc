"""Every provider's usage block, normalised into one :class:`Usage`.

``input_tokens`` counts every prompt token read, cached reads and writes included (Anthropic's
are summed to match); ``cached_tokens``, ``cache_write_tokens`` (split by TTL) and
``output_tokens`` follow. Unexpected fields or values are named in ``Usage.drift``; absurd
numbers are sanitised here, the one place, and named in ``Usage.flags`` (capped at
:data:`MAX_TOKENS`). A drifted or flagged usage is priced null.

It does NOT price anything (prices live in :mod:`analyzer.pricing`).
See docs/money.md for the definitions, drift and sanitising rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: see "Sanitising" above
MAX_TOKENS = 10**9
_FIELDS = (
    "input_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "cache_write_12h_tokens",
)


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0
    #: what the parser had to change (empty: every number as reported)
    flags: tuple[str, ...] = ()
    #: OpenAI's 12-hour writes (Responses' cache_write_tokens_details)
    cache_write_12h_tokens: int = 0
    #: what the rules did not expect (see "Drift" above)
    drift: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in _FIELDS:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.cache_write_1h_tokens + self.cache_write_12h_tokens > self.cache_write_tokens:
            raise ValueError(
                "cache_write_1h_tokens + cache_write_12h_tokens cannot exceed cache_write_tokens"
            )

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens billed at the plain input rate."""
        return max(0, self.input_tokens - self.cached_tokens - self.cache_write_tokens)

    @property
    def cache_write_short_tokens(self) -> int:
        """Writes with the provider's default TTL (Anthropic 5 minutes, OpenAI 30 minutes)."""
        return self.cache_write_tokens - self.cache_write_1h_tokens - self.cache_write_12h_tokens

    def to_dict(self) -> dict[str, int]:
        """The counts (not the flags)."""
        return {name: getattr(self, name) for name in _FIELDS}

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.output_tokens + other.output_tokens,
            tuple(dict.fromkeys(self.flags + other.flags)),
            self.cache_write_12h_tokens + other.cache_write_12h_tokens,
            tuple(dict.fromkeys(self.drift + other.drift)),
        )


#: characters of an upstream's key kept in a drift note
MAX_NOTE_KEY = 80


def _key(key: str) -> str:
    """An upstream's key as a drift note names it: no ``,`` (notes are comma-joined in the
    ledger, so one would read back as two) and at most :data:`MAX_NOTE_KEY` characters."""
    key = key.replace(",", ";")
    return key if len(key) <= MAX_NOTE_KEY else key[:MAX_NOTE_KEY] + "…"


class _Reader:
    """Reads the token counts of one usage block, noting each value it had to change."""

    __slots__ = ("flags", "drift")

    def __init__(self) -> None:
        self.flags: list[str] = []
        self.drift: list[str] = []

    def unknown_cache_fields(
        self, block: Any, known: frozenset[str], where: str = "", *, every_key: bool = False
    ) -> None:
        """Drift for every key of ``block`` that names a cache but is not in ``known`` (with
        ``every_key``, every key not in ``known``: inside a block that is all cache counts)."""
        if isinstance(block, Mapping):
            for key in block:
                if isinstance(key, str) and (every_key or "cache" in key.lower()) and key not in known:
                    self.drift.append(f"{where}{_key(key)}:unknown_field")

    def above(self, name: str, value: int, prompt: int) -> int:
        """``value`` capped at ``prompt``, with a drift note when it was above it."""
        if value > prompt:
            self.drift.append(f"{name}:above_prompt")
            return prompt
        return value

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
        return int(value)

    def _flag(self, key: str, why: str, value: int) -> int:
        self.flags.append(f"usage.{key}:{why}")
        return value

    def usage(self, **counts: int) -> Usage:
        """The :class:`Usage`, with sums capped at :data:`MAX_TOKENS` and the flags attached."""
        for name, value in counts.items():
            if value > MAX_TOKENS:
                counts[name] = self._flag(name, "too_large", MAX_TOKENS)
        return Usage(**counts, flags=tuple(dict.fromkeys(self.flags)), drift=tuple(dict.fromkeys(self.drift)))


#: DeepSeek's
_CHAT_CACHE_KEYS = frozenset({"prompt_cache_hit_tokens", "prompt_cache_miss_tokens"})
_CHAT_DETAIL_CACHE_KEYS = frozenset({"cached_tokens", "cache_write_tokens"})
_RESPONSES_DETAIL_CACHE_KEYS = frozenset(
    {"cached_tokens", "cache_write_tokens", "cache_write_tokens_details"}
)
_RESPONSES_WRITE_TTLS = frozenset({"ttl_30m_tokens", "ttl_12h_tokens"})
_ANTHROPIC_CACHE_KEYS = frozenset(
    {"cache_creation_input_tokens", "cache_read_input_tokens", "cache_creation"}
)
_ANTHROPIC_CREATION_KEYS = frozenset({"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"})
_GEMINI_CACHE_KEYS = frozenset(
    {"cachedContentTokenCount", "cacheTokensDetails", "cached_content_token_count", "cache_tokens_details"}
)


def from_openai_chat(u: Mapping[str, Any]) -> Usage:
    """Chat Completions / Completions usage (also DeepSeek's and Groq's OpenAI-compatible ones);
    GPT-5.6+ reports writes in ``prompt_tokens_details.cache_write_tokens``."""
    n = _Reader()
    prompt = n(u, "prompt_tokens")
    details = u.get("prompt_tokens_details")
    cached = n(details, "cached_tokens")
    write = n(details, "cache_write_tokens")
    n.unknown_cache_fields(u, _CHAT_CACHE_KEYS)
    n.unknown_cache_fields(details, _CHAT_DETAIL_CACHE_KEYS, "prompt_tokens_details.")
    if "prompt_cache_hit_tokens" in u:  # DeepSeek
        cached = n(u, "prompt_cache_hit_tokens")
        prompt = prompt or cached + n(u, "prompt_cache_miss_tokens")
    cached = n.above("cached_tokens", cached, prompt)
    write = n.above("cache_write_tokens", write, prompt - cached)
    return n.usage(
        input_tokens=prompt,
        cached_tokens=cached,
        cache_write_tokens=write,
        output_tokens=n(u, "completion_tokens"),
    )


def from_openai_responses(u: Mapping[str, Any]) -> Usage:
    """Responses API usage (also ``/v1/responses/compact``'s): ``input_tokens`` includes
    ``input_tokens_details.cached_tokens`` and ``cache_write_tokens`` (GPT-5.6+), whose
    ``cache_write_tokens_details`` splits them by TTL (``ttl_30m_tokens``, ``ttl_12h_tokens``)."""
    n = _Reader()
    prompt = n(u, "input_tokens")
    details = u.get("input_tokens_details")
    cached = n.above("cached_tokens", n(details, "cached_tokens"), prompt)
    write = n.above("cache_write_tokens", n(details, "cache_write_tokens"), prompt - cached)
    n.unknown_cache_fields(u, frozenset())
    n.unknown_cache_fields(details, _RESPONSES_DETAIL_CACHE_KEYS, "input_tokens_details.")
    write_12h = 0
    by_ttl = details.get("cache_write_tokens_details") if isinstance(details, Mapping) else None
    if isinstance(by_ttl, Mapping):
        for key in by_ttl:
            if key not in _RESPONSES_WRITE_TTLS:
                n.drift.append(
                    f"input_tokens_details.cache_write_tokens_details.{_key(str(key))}:unknown_field"
                )
        write_12h = n(by_ttl, "ttl_12h_tokens")
        write = max(write, write_12h + n(by_ttl, "ttl_30m_tokens"))
        write = n.above("cache_write_tokens", write, prompt - cached)
    return n.usage(
        input_tokens=prompt,
        cached_tokens=cached,
        cache_write_tokens=write,
        cache_write_12h_tokens=min(write_12h, write),
        output_tokens=n(u, "output_tokens"),
    )


def _anthropic_counts(n: _Reader, u: Mapping[str, Any], where: str = "") -> tuple[int, int, int, int, int]:
    """(plain input, cache read, cache write, of which 1h, output) of one Anthropic usage block."""
    plain = n(u, "input_tokens")
    read = n(u, "cache_read_input_tokens")
    write = n(u, "cache_creation_input_tokens")
    write_1h = 0
    n.unknown_cache_fields(u, _ANTHROPIC_CACHE_KEYS, where)
    creation = u.get("cache_creation")
    if isinstance(creation, Mapping):
        n.unknown_cache_fields(
            creation, _ANTHROPIC_CREATION_KEYS, where + "cache_creation.", every_key=True
        )  # a new TTL
        write_1h = n(creation, "ephemeral_1h_input_tokens")
        write = max(write, write_1h + n(creation, "ephemeral_5m_input_tokens"))
    return plain, read, write, min(write_1h, write), n(u, "output_tokens")


#: already counted in the top-level fields
ITERATIONS_IN_TOP_LEVEL = frozenset({"message"})
#: billed, but not in the top-level fields
ITERATIONS_BILLED_APART = frozenset({"compaction"})


def compaction_entries(iterations: Any) -> list[Mapping[str, Any]]:
    """The ``compaction`` entries of an ``iterations`` list (nothing for any other shape)."""
    if not isinstance(iterations, list):
        return []
    return [e for e in iterations if isinstance(e, Mapping) and e.get("type") in ITERATIONS_BILLED_APART]


def _iterations_drift(iterations: Any) -> list[str]:
    """The drift notes of an ``iterations`` block: not a list, or entries of a type not understood."""
    if iterations is None:
        return []
    if not isinstance(iterations, list):
        return ["iterations:unknown_shape"]
    notes = []
    for i, entry in enumerate(iterations):
        kind = entry.get("type") if isinstance(entry, Mapping) else None
        if kind not in ITERATIONS_IN_TOP_LEVEL and kind not in ITERATIONS_BILLED_APART:
            notes.append(f"iterations[{_key(kind) if isinstance(kind, str) else i}]:unknown_type")
    return notes


def from_anthropic(u: Mapping[str, Any], extra_iterations: Any = None) -> Usage:
    """Messages API usage: ``input_tokens`` excludes cache reads and writes, so they are added;
    the ``compaction`` passes in ``iterations`` (or ``extra_iterations``, a stream's
    ``message_start`` ones) are added to the totals."""
    n = _Reader()
    plain, read, write, write_1h, output = _anthropic_counts(n, u)
    iterations = u.get("iterations")
    n.drift.extend(_iterations_drift(iterations))
    for entry in compaction_entries(iterations if extra_iterations is None else extra_iterations):
        p, r, w, w1h, o = _anthropic_counts(n, entry, "iterations.")
        plain, read, write, write_1h, output = plain + p, read + r, write + w, write_1h + w1h, output + o
    return n.usage(
        input_tokens=plain + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=min(write_1h, write),
        output_tokens=output,
    )


def from_gemini(u: Mapping[str, Any]) -> Usage:
    """Gemini ``usageMetadata``: ``promptTokenCount`` includes ``cachedContentTokenCount``
    (implicit and explicit cache reads alike); ``toolUsePromptTokenCount`` (what a tool such
    as search fed back) is billed as input too, and ``thoughtsTokenCount`` as output."""
    n = _Reader()
    prompt = n(u, "promptTokenCount") + n(u, "toolUsePromptTokenCount")
    n.unknown_cache_fields(u, _GEMINI_CACHE_KEYS)
    cached = n.above("cachedContentTokenCount", n(u, "cachedContentTokenCount"), prompt)
    output = n(u, "candidatesTokenCount") + n(u, "thoughtsTokenCount")
    return n.usage(input_tokens=prompt, cached_tokens=cached, output_tokens=output)


def merge_anthropic_stream(start: Mapping[str, Any] | None, delta: Mapping[str, Any] | None) -> Usage:
    """Anthropic streams split usage: ``message_start`` has input and cache numbers (and, with
    compaction, the compaction pass in its ``iterations``), ``message_delta`` the (cumulative)
    output count and, in newer API versions, may repeat the input numbers (and carries only the
    final message's iterations). Later values win field by field; the compaction passes are
    the delta's when it lists any, else the start's, counted once; the start's ``iterations``
    are checked for drift even where the delta's replace them."""
    merged: dict[str, Any] = dict(start or {})
    for key, value in (delta or {}).items():
        if value is not None:
            merged[key] = value
    passes = compaction_entries((delta or {}).get("iterations")) or compaction_entries(
        (start or {}).get("iterations")
    )
    usage = from_anthropic(merged, extra_iterations=passes)
    started = (start or {}).get("iterations")
    if started is not merged.get(
        "iterations"
    ):  # the delta's replaced them: what the start's held is drift still
        usage.drift = tuple(dict.fromkeys((*usage.drift, *_iterations_drift(started))))
    return usage


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
