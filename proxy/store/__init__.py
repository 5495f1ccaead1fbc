"""The prefix store: which chain entries each tenant has sent before.

:meth:`PrefixStore.seen` looks up a request's chain and records it in one step, returning how
many leading segments were seen before; entries expire after the provider's TTL. Stores:
:mod:`.memory` (default), :mod:`.redis_store`, behind :mod:`.guard` and :mod:`.breaker`.
A Redis failure never fails a request (the answer is ``None``, never ``0``).

It never holds an API key or prompt text, and does not decide what a segment is.
See docs/store.md.
"""

from __future__ import annotations

from proxy.endpoints import ANTHROPIC
from proxy.store.base import PrefixStore
from proxy.store.guard import GuardedStore, guarded
from proxy.store.memory import MemoryStore
from proxy.store.redis_store import RedisStore
from proxy.store.redis_urls import split_key_prefix

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
