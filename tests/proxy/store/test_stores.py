"""proxy.store: memory (LRU + TTL) and Redis stores answer the same questions."""

from __future__ import annotations

import asyncio

from proxy.config import ProxyConfig
from proxy.store import MemoryStore, RedisStore, open_store

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
            return [
                await fast.seen("t", "openai", [A, B]),
                await slow.seen("t", "openai", [A, B, C]),
                await fast.seen("t", "openai", [A, B, C, D]),
                await slow.seen("t", "openai", [A, B, C, D]),
                await fast.ping(),
                await slow.ping(),
            ]
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
    assert store.scope(tenant) is None  # no slot map read yet: the whole store is one scope

    class Node:
        name, server_type = "127.0.0.1:2", "primary"

    manager = store._redis.nodes_manager
    manager.slots_cache[slot + 1 if slot < 16383 else 0] = [Node()]
    assert store.scope(tenant) == f"slot {slot}"  # a map without this slot's node: the slot is its own scope
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


def test_a_cluster_down_at_start_is_one_scope_not_one_per_slot():
    """Before any slot map was read, a failed look-up skips the whole Cluster: not one
    deadline per new tenant's slot (16,384 of them)."""
    from proxy.store.breaker import Breaker
    from proxy.store.guard import GuardedStore
    from tests.support.servers import free_port

    async def scenario():
        url = f"redis-cluster://127.0.0.1:{free_port()}"  # nothing listens there
        store = GuardedStore(RedisStore(url, timeout_s=0.5), 1.0, breaker=Breaker(jitter=0.0))
        try:
            first = await store.seen("a" * 32, "openai", [b"\x01" * 16])
            return first, store.ready("b" * 32), store.ready("c" * 32)
        finally:
            await store.aclose()

    assert asyncio.run(scenario()) == (None, False, False)


def test_redis_py_path_reports_lost_data_on_noscript(tmp_path):
    """rediss://, unix:// and Cluster look-ups (redis-py's client) report a Redis that lost
    the script, like the RESP fast path, so the shared secret gets written back."""
    from tests.support.redis_procs import redis_server

    async def scenario(url):
        store = RedisStore(url + "?key_prefix=lost-data-test:", {"openai": 60.0}, fast=False)
        lost = []
        store.on_lost_data = lambda: lost.append(1)
        try:
            first = await store.seen(
                "t", "openai", [b"\x01" * 16]
            )  # a fresh Redis never saw the script: NOSCRIPT too
            lost.clear()
            await store._redis.script_flush()  # what a restart does to the script cache
            again = await store.seen("t", "openai", [b"\x01" * 16])
            third = await store.seen("t", "openai", [b"\x01" * 16])
            return first, again, third, len(lost)
        finally:
            await store.aclose()

    with redis_server(tmp_path) as node:
        assert asyncio.run(scenario(node.url)) == (0, 1, 1, 1)


def test_a_cluster_url_with_a_password_keeps_it_out_of_node_names():
    """Node names are scope names: in health, logs and errors. The password goes to the client."""
    from proxy.store.redis_urls import cluster_nodes

    url = "redis-cluster://app:s3cr%40t@127.0.0.1:7000,127.0.0.1:7001/?key_prefix=x:"
    assert cluster_nodes(url) == ([("127.0.0.1", 7000), ("127.0.0.1", 7001)], "x:")
    store = RedisStore(url)
    kwargs = store._redis.nodes_manager.connection_kwargs
    assert kwargs.get("username") == "app" and kwargs.get("password") == "s3cr@t"
    assert all("s3cr" not in name for name in store._redis.nodes_manager.startup_nodes)


def test_on_a_cluster_only_the_secrets_node_needs_the_write_back():
    from redis.crc import key_slot

    store = RedisStore("redis-cluster://127.0.0.1:1,127.0.0.1:2?key_prefix=x:")  # never connects here
    assert store.recovers(None) and store.recovers("127.0.0.1:1")  # no map yet: the whole store

    class Node:
        def __init__(self, name):
            self.name, self.server_type = name, "primary"

    slot = key_slot(b"x:tenant-secret")
    manager = store._redis.nodes_manager
    manager.slots_cache = {s: [Node("127.0.0.1:1" if s == slot else "127.0.0.1:2")] for s in range(16384)}
    assert store.recovers("127.0.0.1:1") and not store.recovers("127.0.0.1:2") and store.recovers(None)
    assert RedisStore("redis://127.0.0.1:1/0").recovers(None)
