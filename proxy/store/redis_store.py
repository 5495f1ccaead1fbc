"""The Redis prefix store: one Redis (``--store redis://…``) or a Redis Cluster
(``--store redis-cluster://host:port[,host:port…]``), shared by every proxy on it.

One key per (tenant, chain entry) with the provider's TTL; look-up and record run in ONE
round trip (a Lua script). Keys are ``{key_prefix}{{tenant}}:{hash}`` (default
``prefixgate:{tenant}:…``): the ``{tenant}`` hash tag puts one tenant's keys in one Cluster
slot, so a request's whole chain is one script on one node; the single-node store uses the
same layout. A ``key_prefix`` query parameter on the URL
(``redis://host:6379/0?key_prefix=team-a:``) sets the key prefix (default ``prefixgate:``).
The shared tenant secret lives at ``{key_prefix}tenant-secret`` (:func:`shared_secret`).
Cluster redirects (MOVED/ASK) and a lost node are redis-py's cluster client's to handle.

Unguarded: the proxy always wraps it in :mod:`proxy.store.guard` (a deadline per look-up
and a circuit breaker); redis-py's own socket timeouts (2 s) are only a backstop. This
module does not bound or retry calls.
"""

from __future__ import annotations

import secrets
from typing import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

CLUSTER_SCHEME = "redis-cluster://"
SECRET_KEY = "tenant-secret"

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


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], str]:
    """``redis-cluster://a:7000,b:7001/?key_prefix=x:`` → ([("a", 7000), ("b", 7001)], "x:").
    ValueError for a URL without nodes or with a port that is not a number."""
    if not url.startswith(CLUSTER_SCHEME):
        raise ValueError(f"not a {CLUSTER_SCHEME} URL: {url!r}")
    rest = url[len(CLUSTER_SCHEME):]
    hosts, _, query = rest.partition("?")
    hosts = hosts.split("/", 1)[0]
    prefix = dict(parse_qsl(query, keep_blank_values=True)).get("key_prefix", "prefixgate:")
    nodes = []
    for item in filter(None, hosts.split(",")):
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"--store {CLUSTER_SCHEME} wants host:port[,host:port…], got {item!r}")
        nodes.append((host.strip("[]"), int(port)))
    if not nodes:
        raise ValueError(f"--store {CLUSTER_SCHEME} names no node: {url!r}")
    return nodes, prefix


def chain_key(key_prefix: str, tenant: str, h: bytes) -> str:
    """One chain entry's key; ``{tenant}`` is the Cluster hash tag."""
    return f"{key_prefix}{{{tenant}}}:{h.hex()}"


def _client(url: str, timeout_s: float, *, asyncio: bool):
    """(client, key prefix) for a redis:// or redis-cluster:// URL."""
    if url.startswith(CLUSTER_SCHEME):
        nodes, prefix = cluster_nodes(url)
        if asyncio:
            from redis.asyncio.cluster import ClusterNode, RedisCluster
        else:
            from redis.cluster import ClusterNode, RedisCluster
        client = RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in nodes],
                              socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        return client, prefix
    clean_url, prefix = split_key_prefix(url)
    if asyncio:
        import redis.asyncio as module
    else:
        import redis as module
    return module.Redis.from_url(clean_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s), prefix


def shared_secret(url: str, timeout_s: float = 2.0) -> bytes:
    """The tenant secret every replica on this Redis shares: 32 random bytes created once
    (``SET NX``) at ``{key_prefix}tenant-secret``, then read. Blocking; raises what redis-py
    raises when Redis does not answer. The value is never logged."""
    client, prefix = _client(url, timeout_s, asyncio=False)
    try:
        key = prefix + SECRET_KEY
        client.set(key, secrets.token_bytes(32).hex(), nx=True)
        value = client.get(key)
    finally:
        client.close()
    if value is None:
        raise ConnectionError("the shared tenant secret vanished right after it was set")
    return bytes.fromhex(value.decode())


class RedisStore:
    """Redis or Redis Cluster, one Lua round trip per look-up. Unguarded: wrap it
    (:func:`proxy.store.guard.guarded`)."""

    def __init__(self, url: str, ttl_s: dict[str, float] | None = None, key_prefix: str | None = None, timeout_s: float = 2.0) -> None:
        self._redis, url_prefix = _client(url, timeout_s, asyncio=True)
        self.cluster = url.startswith(CLUSTER_SCHEME)
        self.key_prefix = key_prefix if key_prefix is not None else url_prefix
        self.ttl_s = ttl_s or {}
        self._script = self._redis.register_script(_SEEN_LUA)

    def ready(self) -> bool:
        return True

    def _key(self, tenant: str, h: bytes) -> str:
        return chain_key(self.key_prefix, tenant, h)

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        if not hashes:
            return 0
        ttl_ms = max(1, int(self.ttl_s.get(provider, 3600.0) * 1000))
        return int(await self._script(keys=[self._key(tenant, h) for h in hashes], args=[ttl_ms]))

    async def ping(self) -> bool:
        return bool(await self._redis.ping())

    async def aclose(self) -> None:
        await self._redis.aclose()
