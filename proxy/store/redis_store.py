"""The Redis prefix store (``--store redis://…``): shared by every proxy on one Redis.

One key per (tenant, chain entry) with the provider's TTL; look-up and record run in ONE
round trip (a Lua script). A ``key_prefix`` query parameter on the URL
(``redis://host:6379/0?key_prefix=team-a:``) sets the key prefix (default
``prefixgate:``). Unguarded: the proxy always wraps it in :mod:`proxy.store.guard` (a
deadline per look-up and a circuit breaker); redis-py's own socket timeouts (2 s) are
only a backstop. This module does not bound or retry calls.
"""

from __future__ import annotations

from typing import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


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
    """Redis, one Lua round trip per look-up. Unguarded: wrap it (:func:`proxy.store.guard.guarded`)."""

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
