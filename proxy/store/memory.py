"""The default prefix store: one bounded LRU in the proxy's memory, expiry per entry.

Keys are ``tenant`` + chain hash, shared by no other process. This module does not talk
to anything outside the process.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence

from proxy.store.base import PrefixStore


class MemoryStore(PrefixStore):
    """Bounded in-process store: LRU over all tenants, TTL per provider. Never waits: the
    look-up answers with :meth:`seen_sync`, no task and no guard."""

    waits = False

    def __init__(
        self, max_entries: int = 200_000, ttl_s: dict[str, float] | None = None, clock=time.monotonic
    ) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self.ttl_s = ttl_s or {}
        self._clock = clock
        self._expiry_of: OrderedDict[bytes, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._expiry_of)

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        return self.seen_sync(tenant, provider, hashes)

    def seen_sync(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        now = self._clock()
        head = tenant.encode() + b"\x00"
        keys = [head + h for h in hashes]
        found = 0
        for i in range(len(keys) - 1, -1, -1):
            expiry = self._expiry_of.get(keys[i])
            if expiry is not None and expiry > now:
                found = i + 1
                break
        expiry = now + self.ttl_s.get(provider, 3600.0)
        entries = self._expiry_of
        for key in keys:
            entries[key] = expiry
            entries.move_to_end(key)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)
        return found

    async def aclose(self) -> None:
        self._expiry_of.clear()
        await super().aclose()
