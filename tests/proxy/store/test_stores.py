"""proxy.store: memory (LRU + TTL) and Redis stores answer the same questions."""

from __future__ import annotations

import asyncio

from proxy.config import ProxyConfig
from proxy.store import MemoryStore, RedisStore, open_store, split_key_prefix

A, B, C, D, E = (bytes([i]) * 16 for i in range(1, 6))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_longest_seen_entry_is_the_prefix():
    store = MemoryStore(100)
    assert store.seen_sync("t", "openai", [A, B, C]) == 0
    assert store.seen_sync("t", "openai", [A, B, C]) == 3
    assert store.seen_sync("t", "openai", [A, B, D]) == 2
    assert store.seen_sync("t", "openai", [A, E]) == 1
    assert store.seen_sync("t", "openai", []) == 0


def test_tenants_never_see_each_other():
    store = MemoryStore(100)
    store.seen_sync("alice", "openai", [A, B])
    assert store.seen_sync("bob", "openai", [A, B]) == 0


def test_ttl_per_provider():
    clock = Clock()
    store = MemoryStore(100, {"openai": 10.0, "anthropic": 100.0}, clock=clock)
    store.seen_sync("t", "openai", [A])
    store.seen_sync("t", "anthropic", [B])
    clock.now += 50
    assert store.seen_sync("t", "openai", [A]) == 0  # expired
    assert store.seen_sync("t", "anthropic", [B]) == 1


def test_lru_bound_evicts_the_least_recently_used():
    store = MemoryStore(3)
    store.seen_sync("t", "openai", [A])
    store.seen_sync("t", "openai", [B])
    store.seen_sync("t", "openai", [C])
    store.seen_sync("t", "openai", [A])  # A is fresh again
    store.seen_sync("t", "openai", [D])  # evicts B
    assert len(store) == 3
    assert store.seen_sync("t", "openai", [B]) == 0
    assert store.seen_sync("t", "openai", [A]) == 1


def test_key_prefix_from_url():
    assert split_key_prefix("redis://h:1/0?key_prefix=team:&db=2") == ("redis://h:1/0?db=2", "team:")
    assert split_key_prefix("redis://h:1/0") == ("redis://h:1/0", "prefixgate:")


def test_open_store_picks_by_config(redis_url):
    assert isinstance(open_store(ProxyConfig()), MemoryStore)
    url, prefix = redis_url
    assert isinstance(open_store(ProxyConfig(store=f"{url}?key_prefix={prefix}")), RedisStore)


def test_redis_store_same_answers_and_ttl(redis_url):
    import redis

    url, prefix = redis_url

    async def scenario() -> list[int]:
        store = RedisStore(f"{url}?key_prefix={prefix}", {"openai": 30.0})
        try:
            out = [
                await store.seen("t", "openai", [A, B, C]),
                await store.seen("t", "openai", [A, B, C]),
                await store.seen("t", "openai", [A, B, D]),
                await store.seen("u", "openai", [A, B]),
                await store.seen("t", "openai", []),
            ]
        finally:
            await store.aclose()
        return out

    assert asyncio.run(scenario()) == [0, 3, 2, 0, 0]
    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=prefix + "*"))
    assert len(keys) == 6  # t: A B C D, u: A B
    assert all(0 < client.pttl(k) <= 30_000 for k in keys)
    assert all(k.decode().startswith(prefix) for k in keys)


def test_the_fast_path_and_redis_py_share_keys_and_answers(redis_url):
    """A plain redis:// URL looks up through proxy.store.resp; redis-py's Script (used for
    rediss://, unix:// and Cluster) reads and writes the very same keys."""
    url, prefix = redis_url

    async def scenario() -> list[int]:
        fast = RedisStore(f"{url}?key_prefix={prefix}", {"openai": 30.0})
        slow = RedisStore(f"{url}?key_prefix={prefix}", {"openai": 30.0})
        assert fast._fast is not None
        slow._fast = None
        try:
            return [await fast.seen("t", "openai", [A, B]), await slow.seen("t", "openai", [A, B, C]),
                    await fast.seen("t", "openai", [A, B, C, D]), await slow.seen("t", "openai", [A, B, C, D]),
                    await fast.ping(), await slow.ping()]
        finally:
            await fast.aclose()
            await slow.aclose()

    assert asyncio.run(scenario()) == [0, 2, 3, 4, True, True]
    assert RedisStore("rediss://h:1/0")._fast is None and RedisStore("unix:///tmp/r.sock")._fast is None
    assert RedisStore("redis://h/2")._fast.port == 6379 and RedisStore("redis://h/2")._fast.db == 2


def test_a_cluster_store_scopes_tenants_by_the_node_serving_their_slot():
    from redis.crc import key_slot

    store = RedisStore("redis-cluster://127.0.0.1:1,127.0.0.1:2")  # never connects here
    tenant = "t" * 32
    slot = key_slot(f"prefixgate:{{{tenant}}}:00".encode())
    assert store.scoped and not RedisStore("redis://127.0.0.1:1/0").scoped
    assert store.scope(tenant) == f"slot {slot}"  # no slot map yet: the slot is its own scope

    class Node:
        name, server_type = "127.0.0.1:2", "primary"

    manager = store._redis.nodes_manager
    manager.slots_cache[slot] = [Node()]
    manager.nodes_cache = {Node.name: Node()}
    assert store.scope(tenant) == "127.0.0.1:2" and store.scopes() == ["127.0.0.1:2"]
    assert store.stale(f"slot {slot}") and not store.stale("127.0.0.1:2") and store.stale("127.0.0.1:1")
    assert RedisStore("redis://127.0.0.1:1/0").scopes() == [None]


def test_aclose_gives_a_hung_client_a_bounded_time(monkeypatch, caplog):
    from proxy.store import redis_store

    monkeypatch.setattr(redis_store, "CLOSE_S", 0.05)

    class Hung:
        async def aclose(self):
            await asyncio.Event().wait()

    async def scenario():
        store = RedisStore("redis://127.0.0.1:1/0")
        store._fast, store._redis = Hung(), Hung()
        await asyncio.wait_for(store.aclose(), 10)  # returns: each close was cut at CLOSE_S

    asyncio.run(scenario())
    assert caplog.text.count("close did not finish (TimeoutError)") == 2
