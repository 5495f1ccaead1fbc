"""The prefix store: which chain entries each tenant has sent before.

One operation, :meth:`PrefixStore.seen`: look up a request's chain (see
:mod:`analyzer.prefix`) and record it, in one step, returning how many leading segments
were seen before (the index of the longest chain entry already present, plus one).
Entries expire after the provider's TTL (the time a provider keeps a prefix cached).

- :mod:`proxy.store.base` — :class:`PrefixStore`: the interface every store answers, its
  optional features declared with their defaults (callers call them, never probe).
- :mod:`proxy.store.lookup` — :class:`~proxy.store.lookup.Lookup`: one request's look-up,
  started by the handler beside the upstream call, awaited and closed by the relay.
- :mod:`proxy.store.memory` — :class:`MemoryStore` (default): one bounded LRU across
  tenants, per-entry expiry.
- :mod:`proxy.store.redis_store` — :class:`RedisStore` (``--store redis://…`` or
  ``redis-cluster://host:port[,host:port…]``): shared by every proxy on the same Redis or
  Cluster, one round trip per look-up (a tenant's keys share one hash-tag slot).
- :mod:`proxy.store.guard` and :mod:`proxy.store.breaker` — the deadline and circuit
  breaker that keep a failing or hung Redis off the request path (one breaker per Cluster
  node, so a lost node skips only the tenants whose slot it served).

Keys are ``tenant`` + chain hash (Redis: ``{key_prefix}{tenant}:{hash}``); tenants are keyed hashes (:mod:`proxy.tenant`), so the
store never holds an API key or prompt text. A Redis failure never fails a request: the
proxy puts a :class:`RedisStore` behind :class:`proxy.store.guard.GuardedStore` (a
deadline per look-up and a circuit breaker), whose answer is ``None`` (unknown, never
``0``) when Redis fails, hangs or is being skipped; probes find it again with a capped
exponential backoff. Client timeouts (2 s) are only a backstop. The look-up's hot path
speaks RESP itself (:mod:`proxy.store.resp`). This package does not decide what a segment is.
"""

from __future__ import annotations

from proxy.routing import ANTHROPIC
from proxy.store.base import PrefixStore
from proxy.store.guard import GuardedStore, guarded
from proxy.store.memory import MemoryStore
from proxy.store.redis_store import RedisStore, split_key_prefix

__all__ = [
    "GuardedStore",
    "MemoryStore",
    "PrefixStore",
    "RedisStore",
    "guarded",
    "open_store",
    "split_key_prefix",
]


def open_store(config) -> PrefixStore:
    """The store ``config.store`` names (``"memory"``, a Redis URL or a ``redis-cluster://`` one)."""
    ttl = {"openai": config.openai_ttl_s, ANTHROPIC: config.anthropic_ttl_s}
    if config.store == "memory":
        return MemoryStore(config.store_max_entries, ttl)
    return RedisStore(config.store, ttl)
