"""The Redis prefix store: one Redis (``redis://``) or a Redis Cluster (``redis-cluster://``).

:class:`RedisStore` keeps one key per (tenant, chain entry) with the provider's TTL and looks
up and records a chain in one round trip (a Lua script; keys hash-tagged by tenant, so one
Cluster node). A plain ``redis://`` URL goes through :class:`proxy.store.resp.RespPool`, the
others through redis-py (:mod:`.redis_clients`). It names Cluster scopes for the guard's
breakers, pings, warms up and closes within :data:`CLOSE_S`.

It does not bound calls: the proxy always wraps it in :mod:`proxy.store.guard`. See docs/store.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Sequence

from proxy.store.base import PrefixStore
from proxy.store.redis_clients import CLUSTER_CONNECTIONS, fast_pool, redis_client
from proxy.store.redis_urls import CLUSTER_SCHEME
from proxy.store.resp import RespError, pack
from proxy.store.shared_secret import SECRET_KEY

#: both clients' close at shutdown, in all
CLOSE_S = 0.5
SLOT_SCOPE = "slot "
#: a Cluster's scopes kept at most (they come and go with failovers) before idle ones are dropped
MAX_NODE_GATES = 4 * CLUSTER_CONNECTIONS

# KEYS: the chain's keys in order; ARGV[1]: TTL in ms. Returns the seen-before count.
_SEEN_LUA = """
local found = 0
for i = #KEYS, 1, -1 do
  if redis.call('EXISTS', KEYS[i]) == 1 then found = i break end
end
for i = 1, #KEYS do redis.call('SET', KEYS[i], '1', 'PX', ARGV[1]) end
return found
"""


def chain_key(key_prefix: str, tenant: str, h: bytes) -> str:
    """One chain entry's key; ``{tenant}`` is the Cluster hash tag."""
    return f"{key_prefix}{{{tenant}}}:{h.hex()}"


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
        """``fast=False``: redis-py's client for every URL (what ``bench proxy --store`` compares
        with); else the RESP pool does a plain ``redis://`` URL's look-ups and pings."""
        self._redis, url_prefix = redis_client(url, timeout_s, asyncio=True)
        self.cluster = url.startswith(CLUSTER_SCHEME)
        self.key_prefix = key_prefix if key_prefix is not None else url_prefix
        self.ttl_s = ttl_s or {}
        self._fast = fast_pool(url, timeout_s) if fast else None
        self._prefix = self.key_prefix.encode()
        self._ttl_arg = {provider: b"%d" % max(1, int(ttl * 1000)) for provider, ttl in self.ttl_s.items()}
        #: look-ups sent again as EVAL because Redis had lost the script
        self.noscript = 0
        self.scoped = self.cluster
        self.on_lost_data: Callable[[], None] | None = None
        self._node_gates: dict[str | None, asyncio.Semaphore] = {}

    def _node_gate(self, tenant: str) -> asyncio.Semaphore:
        """The node's share of :data:`CLUSTER_CONNECTIONS`: redis-py's cluster pool raises
        ``MaxConnectionsError`` at once past it, which under load read as the node's failure;
        here a look-up waits its turn instead (within the guard's deadline)."""
        scope = self.scope(tenant)
        gate = self._node_gates.get(scope)
        if gate is None:
            if len(self._node_gates) > MAX_NODE_GATES:
                self._node_gates = {k: v for k, v in self._node_gates.items() if v.locked()}
            gate = self._node_gates[scope] = asyncio.Semaphore(CLUSTER_CONNECTIONS)
        return gate

    def ready(self, tenant: str | None = None) -> bool:
        return True

    def scope(self, tenant: str) -> str | None:
        """The Cluster node (``host:port``) serving ``tenant``'s slot (the hash tag
        ``{tenant}``: the slot of every key of the tenant), from the client's slot map;
        ``"slot N"`` while that slot has no known node; None before any map was read (a
        Cluster down at start: the whole store is one scope, not one per slot). No I/O."""
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
        secret's key; not the other nodes (their return cannot have lost the secret). Before
        any map was read it cannot tell, so every scope does."""
        if not self.cluster or scope is None:
            return True
        owner = self.scope_of_key(self.key_prefix + SECRET_KEY)
        return owner is None or scope == owner

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
        """``EVALSHA``, then ``EVAL`` on ``NOSCRIPT`` (not redis-py's ``Script``: it hides the
        ``NOSCRIPT``), over the RESP pool with keys built as bytes, else over redis-py."""
        if not hashes:
            return 0
        if self._fast is None:
            ttl_ms = max(1, int(self.ttl_s.get(provider, 3600.0) * 1000))
            keys = [self._key(tenant, h) for h in hashes]
            if self.cluster:
                async with self._node_gate(tenant):
                    return await self._eval(keys, ttl_ms)
            return await self._eval(keys, ttl_ms)
        head = b"%s{%s}:" % (self._prefix, tenant.encode())
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
        """Redis restarted or flushed its scripts (``EVAL`` runs it and caches it again): maybe
        its data is lost too."""
        self.noscript += 1
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
        scope with no known node. A ping to a random node first (re)reads the slot map."""
        if self._fast is not None:
            return await self._fast.call(_PING) == b"PONG"
        if not self.cluster:
            return bool(await self._redis.ping())
        if scope is None:
            return bool(await self._redis.ping(target_nodes=self._redis.RANDOM))
        manager = self._redis.nodes_manager
        if scope.startswith(SLOT_SCOPE):
            if not manager.slots_cache:
                await self._redis.ping(target_nodes=self._redis.RANDOM)
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
        """Close both clients together, within :data:`CLOSE_S` in all (a hung Redis never hangs
        a shutdown); a close that times out or breaks is logged: the process is ending anyway."""
        clients = [c for c in (self._fast, self._redis) if c is not None]
        results = await asyncio.gather(*(_close_within(c, CLOSE_S) for c in clients))
        for exc in results:
            if exc is not None:
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
