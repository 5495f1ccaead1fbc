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
    openai_ttl_s: float = OPENAI_TTL_S  # OpenAI: an unused prefix is evicted after 5–10 minutes
    openai_extended_ttl_s: float = OPENAI_EXTENDED_TTL_S  # prompt_cache_retention: "24h"
    anthropic_ttl_5m_s: float = ANTHROPIC_TTL_S["5m"]
    anthropic_ttl_1h_s: float = ANTHROPIC_TTL_S["1h"]
    gemini_ttl_s: float = GEMINI_TTL_S  # Gemini's implicit cache: how long an unused prefix stays (undocumented; analyzer.cache_rules)
    max_cache_entries: int = 500_000  # LRU bound over all keys and models
    default_output_tokens: int = 16  # reply length when the request sets no limit
    max_output_tokens: int = 8192  # cap on any reply, whatever the request asks
    default_chunks: int = 4  # streamed content pieces unless x-emulator-chunks says otherwise
    embedding_dimensions: int = 16
    hold_timeout_s: float = 10.0  # x-emulator-hold waits at most this long for a release
    lookback_blocks: int = (
        ANTHROPIC_LOOKBACK_BLOCKS  # Anthropic: earlier block boundaries a breakpoint also checks
    )
    max_breakpoints: int = ANTHROPIC_MAX_BREAKPOINTS
    compaction_trigger_tokens: int = 150_000  # Anthropic compaction: the trigger when the edit names none
    max_remembered_messages: int = 10_000  # Anthropic diagnostics: opted-in requests remembered (LRU)
    require_api_key: bool = False  # True: 401 without Authorization / x-api-key
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
