"""The Redis prefix store: one Redis (``redis://``) or a Redis Cluster (``redis-cluster://``).

:class:`RedisStore` keeps one key per (tenant, chain entry) with the provider's TTL and looks
up and records a chain in one round trip (a Lua script; keys hash-tagged by tenant, so one
Cluster node). A plain ``redis://`` URL goes through :class:`proxy.store.resp.RespPool`, the
others through redis-py. It also names Cluster scopes for the guard's breakers, pings, warms up
at start and closes within :data:`CLOSE_S`; :func:`shared_secret` reads the tenant secret.

This module does not bound calls: the proxy always wraps the store in :mod:`proxy.store.guard`.
See docs/store.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Callable, Sequence
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from proxy.store.base import PrefixStore
from proxy.store.resp import RespError, RespPool, pack

CLUSTER_SCHEME = "redis-cluster://"
SECRET_KEY = "tenant-secret"
CLOSE_S = 0.5  # both clients' close at shutdown, in all
SLOT_SCOPE = "slot "
CLUSTER_CONNECTIONS = 100  # per Cluster node: redis-py's pool size, and the look-ups in flight on it at once

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


def redacted(url: str) -> str:
    """``url`` fit for an error message or a log: a password (or a lone user-info part, which
    may be one) in its authority replaced by ``***``. Handles ``redis-cluster://`` node lists."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    authority, tail = rest[:end], rest[end:]
    if "@" not in authority:
        return url
    userinfo, _, hosts = authority.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    return f"{scheme}://{user + ':' if colon else ''}***@{hosts}{tail}"


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], str]:
    """``redis-cluster://a:7000,b:7001/?key_prefix=x:`` → ([("a", 7000), ("b", 7001)], "x:").
    ValueError for a URL without nodes or with a port that is not a number."""
    if not url.startswith(CLUSTER_SCHEME):
        raise ValueError(f"not a {CLUSTER_SCHEME} URL: {redacted(url)!r}")
    rest = url[len(CLUSTER_SCHEME) :]
    hosts, _, query = rest.partition("?")
    hosts = hosts.rpartition("@")[2]  # user:password@ is cluster_auth's, never part of a node name
    hosts = hosts.split("/", 1)[0]
    prefix = dict(parse_qsl(query, keep_blank_values=True)).get("key_prefix", "prefixgate:")
    if "{" in prefix or "}" in prefix:  # its hash tag would put every tenant's keys in one slot
        raise ValueError(
            f"--store {CLUSTER_SCHEME}: key_prefix must not hold '{{' or '}}' (the tenant is the hash tag)"
        )
    nodes = []
    for item in filter(None, hosts.split(",")):
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"--store {CLUSTER_SCHEME} wants host:port[,host:port…], got {item!r}")
        nodes.append((host.strip("[]"), int(port)))
    if not nodes:
        raise ValueError(f"--store {CLUSTER_SCHEME} names no node: {redacted(url)!r}")
    return nodes, prefix


def cluster_auth(url: str) -> dict[str, str]:
    """``redis-cluster://user:pass@a:7000,…`` → ``{"username": "user", "password": "pass"}``
    (percent-decoded; only what the URL gives)."""
    hosts = url[len(CLUSTER_SCHEME) :].partition("?")[0]
    userinfo, at, _ = hosts.rpartition("@")
    if not at:
        return {}
    username, colon, password = userinfo.partition(":")
    auth = {"username": unquote(username)} if username else {}
    if colon:
        auth["password"] = unquote(password)
    return auth


def chain_key(key_prefix: str, tenant: str, h: bytes) -> str:
    """One chain entry's key; ``{tenant}`` is the Cluster hash tag."""
    return f"{key_prefix}{{{tenant}}}:{h.hex()}"


def _retry(asyncio: bool):
    """One immediate retry on a connection error, no backoff (redis-py's default retries ten
    times with a backoff of up to a second: seconds of waiting on a Redis that is down)."""
    from redis.backoff import NoBackoff

    if asyncio:
        from redis.asyncio.retry import Retry
    else:
        from redis.retry import Retry
    return Retry(NoBackoff(), 1)


def _client(url: str, timeout_s: float, *, asyncio: bool):
    """(client, key prefix) for a redis:// or redis-cluster:// URL."""
    if url.startswith(CLUSTER_SCHEME):
        nodes, prefix = cluster_nodes(url)
        if asyncio:
            from redis.asyncio.cluster import ClusterNode, RedisCluster
        else:
            from redis.cluster import ClusterNode, RedisCluster
        client = RedisCluster(
            startup_nodes=[ClusterNode(h, p) for h, p in nodes],
            **cluster_auth(url),
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            max_connections=CLUSTER_CONNECTIONS,
        )
        return client, prefix
    clean_url, prefix = split_key_prefix(url)
    if asyncio:
        import redis.asyncio as module
    else:
        import redis as module
    return module.Redis.from_url(
        clean_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=_retry(asyncio)
    ), prefix


def _fast_pool(url: str, timeout_s: float) -> RespPool | None:
    """A :class:`RespPool` for a plain ``redis://host[:port][/db]`` URL; None for the others."""
    if not url.startswith("redis://"):
        return None
    from redis.asyncio.connection import parse_url

    kwargs = parse_url(split_key_prefix(url)[0])
    if "host" not in kwargs or kwargs.get("connection_class") is not None:
        return None
    return RespPool(
        kwargs["host"],
        int(kwargs.get("port") or 6379),
        db=int(kwargs.get("db") or 0),
        username=kwargs.get("username"),
        password=kwargs.get("password"),
        connect_timeout_s=timeout_s,
    )


def shared_secret(url: str, timeout_s: float = 2.0) -> bytes:
    """The tenant secret every replica on this Redis shares: 32 random bytes created once
    (``SET NX``) at ``{key_prefix}tenant-secret``, then read. Blocking; raises what redis-py
    raises when Redis does not answer. The value is never logged."""
    return write_back_secret(
        url, secrets.token_bytes(32), timeout_s
    )  # a fresh one, kept only if none is there


def write_back_secret(url: str, secret: bytes, timeout_s: float = 2.0) -> bytes:
    """Write ``secret`` back as the shared tenant secret if the store has none (``SET NX``: a
    Redis that restarted without its data), then read what the store holds: ``secret``, or the
    value a replica started meanwhile created. Blocking; raises what redis-py raises."""
    client, prefix = _client(url, timeout_s, asyncio=False)
    try:
        key = prefix + SECRET_KEY
        client.set(key, secret.hex(), nx=True)
        value = client.get(key)
    finally:
        client.close()
    if value is None:
        raise ConnectionError("the shared tenant secret vanished right after it was set")
    return bytes.fromhex(value.decode())


_SEEN_SHA_TEXT = hashlib.sha1(_SEEN_LUA.encode()).hexdigest()
_SEEN_SHA = _SEEN_SHA_TEXT.encode()
_PING = pack([b"PING"])


class RedisStore(PrefixStore):
    """Redis or Redis Cluster, one Lua round trip per look-up. Unguarded: wrap it
    (:func:`proxy.store.guard.guarded`)."""

    def __init__(
        self,
        url: str,
        ttl_s: dict[str, float] | None = None,
        key_prefix: str | None = None,
        timeout_s: float = 2.0,
        *,
        fast: bool = True,
    ) -> None:
        """``fast=False``: redis-py's client for every URL (what ``bench proxy --store`` compares with)."""
        self._redis, url_prefix = _client(url, timeout_s, asyncio=True)
        self.cluster = url.startswith(CLUSTER_SCHEME)
        self.key_prefix = key_prefix if key_prefix is not None else url_prefix
        self.ttl_s = ttl_s or {}
        self._fast = _fast_pool(url, timeout_s) if fast else None  # None: redis-py's client does the look-ups
        self._prefix = self.key_prefix.encode()
        self._ttl_arg = {provider: b"%d" % max(1, int(ttl * 1000)) for provider, ttl in self.ttl_s.items()}
        self.noscript = 0  # look-ups sent again as EVAL because Redis had lost the script
        self.scoped = self.cluster  # one breaker per node (proxy.store.guard)
        self.on_lost_data: Callable[[], None] | None = None
        self._in_flight: dict[
            str | None, asyncio.Semaphore
        ] = {}  # Cluster: per node, the look-ups it has at once

    def _node_gate(self, tenant: str) -> asyncio.Semaphore:
        """The node's share of :data:`CLUSTER_CONNECTIONS`: redis-py's cluster pool raises
        ``MaxConnectionsError`` at once past it, which under load read as the node's failure;
        here a look-up waits its turn instead (within the guard's deadline)."""
        scope = self.scope(tenant)
        gate = self._in_flight.get(scope)
        if gate is None:
            if len(self._in_flight) > 4 * CLUSTER_CONNECTIONS:  # scopes come and go (failovers): bounded
                self._in_flight = {k: v for k, v in self._in_flight.items() if v.locked()}
            gate = self._in_flight[scope] = asyncio.Semaphore(CLUSTER_CONNECTIONS)
        return gate

    def ready(self, tenant: str | None = None) -> bool:
        return True

    def scope(self, tenant: str) -> str | None:
        """The Cluster node (``host:port``) serving ``tenant``'s slot, from the client's slot
        map; ``"slot N"`` while that slot has no known node; None (the whole store) before any
        map was read. No I/O."""
        # the hash tag {tenant}: the slot of every key of the tenant; no map read yet (a Cluster
        # down at start): None, the whole store is one scope, not one per slot (16,384)
        return self.scope_of_key(tenant)

    def scopes(self) -> list[str | None]:
        """The scopes health checks: the Cluster's primaries (none before its map is read); a
        single Redis's one scope."""
        if not self.cluster:
            return [None]
        return [n.name for n in self._redis.nodes_manager.nodes_cache.values() if n.server_type == "primary"]

    def recovers(self, scope: str | None) -> bool:
        """Whether a probe of ``scope`` must run the recovery work (the shared secret's
        write-back): a single Redis, the whole Cluster, and the Cluster scope serving the
        secret's key; not the other nodes (their return cannot have lost the secret)."""
        if not self.cluster or scope is None:
            return True
        owner = self.scope_of_key(self.key_prefix + SECRET_KEY)
        return owner is None or scope == owner  # no map read yet: cannot tell, so it may

    def scope_of_key(self, key: str) -> str | None:
        """The scope serving ``key``'s slot (:meth:`scope`'s rules, for any key). No I/O."""
        from redis.crc import key_slot

        slots = self._redis.nodes_manager.slots_cache
        if not slots:
            return None
        slot = key_slot(key.encode())
        nodes = slots.get(slot)
        return nodes[0].name if nodes else f"{SLOT_SCOPE}{slot}"

    def stale(self, scope: str | None) -> bool:
        """True for a scope that no longer maps anything: a node gone from the map, a slot
        that has a node again."""
        if not self.cluster or scope is None:
            return False
        manager = self._redis.nodes_manager
        if scope.startswith(SLOT_SCOPE):
            return bool(manager.slots_cache.get(int(scope[len(SLOT_SCOPE) :])))
        return bool(manager.nodes_cache) and scope not in manager.nodes_cache

    def _key(self, tenant: str, h: bytes) -> str:
        return chain_key(self.key_prefix, tenant, h)

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int:
        if not hashes:
            return 0
        if (
            self._fast is None
        ):  # EVALSHA, then EVAL on NOSCRIPT, as below (not redis-py's Script: it hides the NOSCRIPT)
            ttl_ms = max(1, int(self.ttl_s.get(provider, 3600.0) * 1000))
            keys = [self._key(tenant, h) for h in hashes]
            if self.cluster:
                async with self._node_gate(tenant):
                    return await self._eval(keys, ttl_ms)
            return await self._eval(keys, ttl_ms)
        head = b"%s{%s}:" % (self._prefix, tenant.encode())  # chain_key's layout, in bytes
        ttl = self._ttl_arg.get(provider) or b"%d" % max(1, int(self.ttl_s.get(provider, 3600.0) * 1000))
        args = [b"EVALSHA", _SEEN_SHA, b"%d" % len(hashes), *[head + h.hex().encode() for h in hashes], ttl]
        try:
            return int(await self._fast.call(pack(args)))
        except RespError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        self._lost_script()
        args[:2] = [b"EVAL", _SEEN_LUA.encode()]
        return int(await self._fast.call(pack(args)))

    async def _eval(self, keys: list[str], ttl_ms: int) -> int:
        from redis.exceptions import NoScriptError

        try:
            return int(await self._redis.evalsha(_SEEN_SHA_TEXT, len(keys), *keys, ttl_ms))
        except NoScriptError:
            self._lost_script()
        return int(await self._redis.eval(_SEEN_LUA, len(keys), *keys, ttl_ms))

    def _lost_script(self) -> None:
        self.noscript += 1  # Redis restarted or flushed its scripts: EVAL runs it and caches it again
        if self.on_lost_data is not None:
            self.on_lost_data()

    async def warm(self) -> None:
        """Read what the first look-ups would otherwise wait for: on a Cluster the slot map,
        then on each primary a ``SCRIPT LOAD`` (one connection opened, the script cached: the
        first ``EVALSHA`` is then no ``NOSCRIPT``); on one Redis the same on one pooled
        connection. Raises what the client raises; unbounded (the guard bounds it)."""
        if self._fast is not None:
            await self._fast.call(pack([b"SCRIPT", b"LOAD", _SEEN_LUA.encode()]))
            return
        if not self.cluster:
            await self._redis.script_load(_SEEN_LUA)
            return
        await self._redis.initialize()
        primaries = [n for n in self._redis.nodes_manager.nodes_cache.values() if n.server_type == "primary"]
        await asyncio.gather(
            *(self._redis.execute_command("SCRIPT", "LOAD", _SEEN_LUA, target_nodes=n) for n in primaries)
        )

    async def ping(self, scope: str | None = None) -> bool:
        """PING the store, or one scope of a Cluster (:meth:`scope`); ConnectionError for a
        scope with no known node."""
        if self._fast is not None:
            return await self._fast.call(_PING) == b"PONG"
        if not self.cluster:
            return bool(await self._redis.ping())
        if scope is None:
            return bool(
                await self._redis.ping(target_nodes=self._redis.RANDOM)
            )  # reads the slot map first if needed
        manager = self._redis.nodes_manager
        if scope.startswith(SLOT_SCOPE):
            if not manager.slots_cache:
                await self._redis.ping(target_nodes=self._redis.RANDOM)  # (re)reads the slot map
            nodes = manager.slots_cache.get(int(scope[len(SLOT_SCOPE) :]))
            if not nodes:
                raise ConnectionError(f"no Cluster node serves {scope}")
            node = nodes[0]
        else:
            node = manager.nodes_cache.get(scope)
            if node is None:
                raise ConnectionError(f"Cluster node {scope} is not in the slot map")
        return bool(await self._redis.execute_command("PING", target_nodes=node))

    async def aclose(self) -> None:
        """Close both clients together, within :data:`CLOSE_S` in all (a hung Redis never hangs a shutdown)."""
        clients = [c for c in (self._fast, self._redis) if c is not None]
        results = await asyncio.gather(*(_close_within(c, CLOSE_S) for c in clients))
        for exc in results:
            if exc is not None:  # TimeoutError or a broken connection: the process is ending anyway
                logging.getLogger("prefixgate.store").warning(
                    "prefix store: close did not finish (%s)", type(exc).__name__
                )


async def _close_within(client, timeout_s: float) -> Exception | None:
    try:
        async with asyncio.timeout(timeout_s):
            await client.aclose()
    except Exception as exc:
        return exc
    return None
