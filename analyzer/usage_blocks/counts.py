"""One usage, normalised across providers: :class:`Usage`.

``input_tokens`` counts every prompt token read, cached reads and writes included;
``cached_tokens``, ``cache_write_tokens`` (of which 1-hour and 12-hour writes) and
``output_tokens`` follow; ``flags`` and ``drift`` say what the reader had to change or did not
expect. Counts are never negative, and the TTL splits never exceed the writes.

It reads no provider's block (:mod:`analyzer.usage_blocks`) and prices nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the largest count a reader keeps: a larger one is capped and flagged
MAX_TOKENS = 10**9
FIELDS = (
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
    #: what the rules did not expect (docs/money.md, "Drift")
    drift: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in FIELDS:
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
        return {name: getattr(self, name) for name in FIELDS}

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
