"""The prefix store: which chain entries each tenant has sent before.

One operation, :meth:`PrefixStore.seen`: look up a request's chain (see
:mod:`analyzer.prefix`) and record it, in one step, returning how many leading segments
were seen before (the index of the longest chain entry already present, plus one).
Entries expire after the provider's TTL (the time a provider keeps a prefix cached).

- :class:`MemoryStore` (default): one bounded LRU across tenants, per-entry expiry.
- :class:`RedisStore` (``--store redis://…``): one key per (tenant, chain entry) with a
  TTL; lookup and record run in ONE round trip (a Lua script). Shared by every proxy
  process pointing at the same Redis. A ``key_prefix`` query parameter on the URL
  (``redis://host:6379/0?key_prefix=team-a:``) sets the key prefix (default
  ``prefixgate:``).

Keys are ``tenant`` + chain hash; tenants are keyed hashes (:mod:`proxy.tenant`), so the
store never holds an API key or prompt text. A Redis failure never fails a request: the
proxy puts a :class:`RedisStore` behind :class:`proxy.store_guard.GuardedStore` (a
deadline per look-up and a circuit breaker), whose answer is ``None`` (unknown, never
``0``) when Redis fails, hangs or is being skipped. Redis' own socket timeouts (2 s) are
only a backstop. This module does not decide what a segment is, and bounds no calls.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from proxy.routing import ANTHROPIC


class PrefixStore(Protocol):
    def ready(self) -> bool: ...  # False: skip the store now, without awaiting anything

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None: ...  # None: unknown

    async def aclose(self) -> None: ...


class MemoryStore:
    """Bounded in-process store: LRU over all tenants, TTL per provider."""

    def __init__(self, max_entries: int = 200_000, ttl_s: dict[str, float] | None = None, clock=time.monotonic) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self.ttl_s = ttl_s or {}
        self._clock = clock
        self._entries: OrderedDict[bytes, float] = OrderedDict()  # key → expiry

    def __len__(self) -> int:
        return len(self._entries)

    def ready(self) -> bool:
        return True

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        return self.seen_sync(tenant, provider, hashes)

    def seen_sync(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        now = self._clock()
        head = tenant.encode() + b"\x00"
        keys = [head + h for h in hashes]
        found = 0
        for i in range(len(keys) - 1, -1, -1):
            expiry = self._entries.get(keys[i])
            if expiry is not None and expiry > now:
                found = i + 1
                break
        expiry = now + self.ttl_s.get(provider, 3600.0)
        entries = self._entries
        for key in keys:
            entries[key] = expiry
            entries.move_to_end(key)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)
        return found

    async def aclose(self) -> None:
        self._entries.clear()


# KEYS: the chain's keys in order; ARGV[1]: TTL in ms. Returns the seen-before count.
_SEEN_LUA = """
local found = 0
for i = #KEYS, 1, -1 do
  if redis.call('EXISTS', KEYS[i]) == 1 then found = i break end
end
for i = 1, #KEYS do redis.call('SET', KEYS[i], '1', 'PX', ARGV[1]) end
return found
"""


def split_key_prefix(url: str, default: str = "prefixgate:") -> tuple[str, str]:
    """``redis://h/0?key_prefix=x:`` → (``redis://h/0``, ``x:``); other query args stay."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    prefix = default
    rest = []
    for key, value in query:
        if key == "key_prefix":
            prefix = value
        else:
            rest.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(rest))), prefix


class RedisStore:
    """Redis, one Lua round trip per look-up. Unguarded: wrap it (:func:`proxy.store_guard.guarded`)."""

    def __init__(self, url: str, ttl_s: dict[str, float] | None = None, key_prefix: str | None = None, timeout_s: float = 2.0) -> None:
        import redis.asyncio as aioredis

        clean_url, url_prefix = split_key_prefix(url)
        self.key_prefix = key_prefix if key_prefix is not None else url_prefix
        self.ttl_s = ttl_s or {}
        self._redis = aioredis.Redis.from_url(clean_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._script = self._redis.register_script(_SEEN_LUA)

    def ready(self) -> bool:
        return True

    def _key(self, tenant: str, h: bytes) -> str:
        return f"{self.key_prefix}{tenant}:{h.hex()}"

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        if not hashes:
            return 0
        ttl_ms = max(1, int(self.ttl_s.get(provider, 3600.0) * 1000))
        return int(await self._script(keys=[self._key(tenant, h) for h in hashes], args=[ttl_ms]))

    async def ping(self) -> bool:
        return bool(await self._redis.ping())

    async def aclose(self) -> None:
        await self._redis.aclose()


def open_store(config) -> PrefixStore:
    """The store ``config.store`` names (``"memory"`` or a Redis URL)."""
    ttl = {"openai": config.openai_ttl_s, ANTHROPIC: config.anthropic_ttl_s}
    if config.store == "memory":
        return MemoryStore(config.store_max_entries, ttl)
    return RedisStore(config.store, ttl)
