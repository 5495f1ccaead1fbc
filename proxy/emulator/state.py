"""What one emulator app holds between requests: config, caches, holds, counters.

The state lives in memory for the life of the app; nothing is written to disk. Request
ids are sequential (deterministic for tests). API keys are reduced to digests by the
caller before they reach the caches.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from proxy.emulator.anthropic_diagnostics import MessageMemory
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.controls import Controls, Holds
from proxy.emulator.gemini_cached_contents import CachedContents
from proxy.emulator.provider_cache import ProviderCache


class EmulatorState:
    """One emulator's state: the providers' cache, Gemini's explicit caches (``cachedContents/…``),
    Anthropic diagnostics' fingerprints (``messages``), the holds and the request counts."""

    def __init__(self, config: EmulatorConfig):
        self.config = config
        self.cache = ProviderCache(config.max_cache_entries, config.clock)
        self.cached_contents = CachedContents()
        self.messages = MessageMemory(config.max_remembered_messages)
        self.holds = Holds()
        self.requests = 0
        self.by_route: Counter[str] = Counter()
        self._ids = itertools.count(1)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}emu{next(self._ids):021d}"

    def now(self) -> int:
        return int(self.config.clock())

    def snapshot(self) -> dict:
        return {
            "requests": self.requests,
            "by_route": dict(self.by_route),
            "cache_entries": len(self.cache),
            "cached_contents": self.cached_contents.counts(),
            "remembered_messages": len(self.messages),
        }


@dataclass(frozen=True, slots=True)
class Call:
    """One parsed request as the route handlers see it (``query``: the query string, e.g.
    Gemini's ``alt=sse``, never the key)."""

    route: str
    body: dict
    key: bytes
    controls: Controls = field(default_factory=Controls)
    query: dict[str, str] = field(default_factory=dict)
