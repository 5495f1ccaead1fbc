"""The emulator's stand-in for a provider's prompt cache: :class:`ProviderCache`, a bounded
LRU + TTL set of prefix hashes.

Each entry is a hash (bytes) that names an exact prefix under one API key and model, with
an expiry time and the TTL it refreshes to when read. Time comes from the injected clock.
API keys are never stored: :func:`key_id` reduces one to a short digest first.

This module knows nothing about providers' rules (see ``openai_cache`` / ``anthropic_cache``).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


def key_id(api_key: str | None) -> bytes:
    """A 16-byte digest of the API key (or of nothing); the key itself is never kept."""
    return hashlib.sha256(b"prefixgate-emulator\x00" + (api_key or "").encode("utf-8", "replace")).digest()[
        :16
    ]


@dataclass(slots=True)
class CachedPrefix:
    expires_at: float
    ttl_s: float


class ProviderCache:
    def __init__(self, max_entries: int, clock: Callable[[], float]):
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[bytes, CachedPrefix] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, h: bytes) -> CachedPrefix | None:
        """The live entry for ``h`` (expired ones are dropped), without refreshing it."""
        entry = self._entries.get(h)
        if entry is None:
            return None
        if entry.expires_at <= self.clock():
            del self._entries[h]
            return None
        return entry

    def touch(self, h: bytes) -> bool:
        """Refresh a live entry's expiry (a cache read); False when absent or expired."""
        entry = self.get(h)
        if entry is None:
            return False
        entry.expires_at = self.clock() + entry.ttl_s
        self._entries.move_to_end(h)
        return True

    def put(self, h: bytes, ttl_s: float) -> None:
        """Write or refresh ``h``; an existing entry keeps the longer of the two TTLs."""
        entry = self._entries.get(h)
        ttl = max(ttl_s, entry.ttl_s) if entry is not None and entry.expires_at > self.clock() else ttl_s
        self._entries[h] = CachedPrefix(self.clock() + ttl, ttl)
        self._entries.move_to_end(h)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()
