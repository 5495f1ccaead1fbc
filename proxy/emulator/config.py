"""The emulator's settings, checked once at start.

One frozen dataclass: cache TTLs, reply sizes, memory bounds and the clock. The clock is
injectable so TTL tests advance time instead of sleeping. Nothing here opens sockets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from analyzer.cache_rules import (
    ANTHROPIC_LOOKBACK_BLOCKS,
    ANTHROPIC_MAX_BREAKPOINTS,
    ANTHROPIC_TTL_S,
    GEMINI_TTL_S,
    OPENAI_EXTENDED_TTL_S,
    OPENAI_TTL_S,
)


@dataclass(frozen=True)
class EmulatorConfig:
    """The emulator's knobs. TTLs: OpenAI evicts an unused prefix after 5–10 minutes (``24h`` with
    ``prompt_cache_retention``); Gemini's implicit cache keeps one ``gemini_ttl_s`` (undocumented:
    :mod:`analyzer.cache_rules`). ``max_cache_entries``: the LRU bound over all keys and models.
    Replies: ``default_output_tokens`` long when the request sets no limit, never over
    ``max_output_tokens``, streamed in ``default_chunks`` pieces unless ``x-emulator-chunks``
    says otherwise. ``hold_timeout_s``: how long ``x-emulator-hold`` waits for a release.
    Anthropic: ``lookback_blocks`` earlier block boundaries a breakpoint also checks, the
    compaction trigger when the edit names none, and ``max_remembered_messages`` opted-in
    requests remembered for diagnostics (LRU). ``require_api_key``: 401 without Authorization /
    x-api-key."""

    openai_ttl_s: float = OPENAI_TTL_S
    openai_extended_ttl_s: float = OPENAI_EXTENDED_TTL_S
    anthropic_ttl_5m_s: float = ANTHROPIC_TTL_S["5m"]
    anthropic_ttl_1h_s: float = ANTHROPIC_TTL_S["1h"]
    gemini_ttl_s: float = GEMINI_TTL_S
    max_cache_entries: int = 500_000
    default_output_tokens: int = 16
    max_output_tokens: int = 8192
    default_chunks: int = 4
    embedding_dimensions: int = 16
    hold_timeout_s: float = 10.0
    lookback_blocks: int = ANTHROPIC_LOOKBACK_BLOCKS
    max_breakpoints: int = ANTHROPIC_MAX_BREAKPOINTS
    compaction_trigger_tokens: int = 150_000
    max_remembered_messages: int = 10_000
    require_api_key: bool = False
    clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in (
            "openai_ttl_s",
            "openai_extended_ttl_s",
            "anthropic_ttl_5m_s",
            "anthropic_ttl_1h_s",
            "gemini_ttl_s",
            "hold_timeout_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in (
            "max_cache_entries",
            "default_output_tokens",
            "max_output_tokens",
            "default_chunks",
            "embedding_dimensions",
            "max_breakpoints",
            "compaction_trigger_tokens",
            "max_remembered_messages",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.lookback_blocks < 0:
            raise ValueError("lookback_blocks must be >= 0")
        if self.default_output_tokens > self.max_output_tokens:
            raise ValueError("default_output_tokens cannot exceed max_output_tokens")
        if not callable(self.clock):
            raise ValueError("clock must be a callable returning seconds")
