"""A 3-node Redis Cluster the test starts itself: the store's keys, one round trip, replicas.

Three ``redis-server --cluster-enabled yes`` processes on free ports, joined with
``redis-cli --cluster create``; always ended in ``finally``. Under CI a missing
redis-server or redis-cli fails.
"""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest

from proxy.config import ProxyConfig
from proxy.store import RedisStore, open_store
from proxy.store.redis_store import chain_key
from proxy.store.shared_secret import shared_secret
from proxy.tenant import TenantHasher
from tests.support.redis_procs import redis_cluster

pytestmark = pytest.mark.e2e

A, B, C, D = (bytes([i]) * 16 for i in range(1, 5))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(redis-cluster:// URL, ports, processes) of a fresh 3-master cluster."""
    yield from redis_cluster(tmp_path_factory)


@pytest.fixture
def own_cluster(tmp_path_factory):
    """A cluster of this test's own (it may kill a node)."""
    yield from redis_cluster(tmp_path_factory)


def test_cluster_url_is_checked():
    assert isinstance(
        open_store(ProxyConfig(store="redis-cluster://127.0.0.1:7000,127.0.0.1:7001?key_prefix=x:")),
        RedisStore,
    )
    for bad in ("redis-cluster://", "redis-cluster://host", "redis-cluster://h:notaport"):
        with pytest.raises(ValueError, match="redis-cluster"):
            ProxyConfig(store=bad)


def test_a_tenants_keys_share_one_slot():
    from redis.crc import key_slot

    keys = [chain_key("prefixgate:", "t" * 32, h).encode() for h in (A, B, C, D)]
    assert keys[0].startswith(b"prefixgate:{" + b"t" * 32 + b"}:")
    assert len({key_slot(k) for k in keys}) == 1


def test_cluster_store_answers_like_one_redis_in_one_round_trip(cluster):
    url, ports, _ = cluster

    async def scenario():
        store = RedisStore(f"{url}?key_prefix=pg-cluster-test:", {"openai": 30.0})
        try:
            assert await store.ping()
            tenants = ("alice", "bob", "carol", "dave", "erin", "frank")  # tenants land on several nodes
            for (
                tenant
            ) in tenants:  # a node's first look-up finds no script (NOSCRIPT, then EVAL caches it there)
                await store.seen(tenant, "openai", [b"\xee" * 16])
            before = [_evalsha_calls(p) for p in ports]
            out = []
            for tenant in tenants:
                chain = [bytes([i]) * 16 for i in range(1, 40)]  # a long chain: one script, no CROSSSLOT
                out.append(
                    (
                        await store.seen(tenant, "openai", chain),
                        await store.seen(tenant, "openai", chain),
                        await store.seen(tenant, "openai", [*chain[:5], D * 2]),
                    )
                )
            return out, [_evalsha_calls(p) - b for p, b in zip(ports, before)]
        finally:
            await store.aclose()

    answers, calls = asyncio.run(scenario())
    assert answers == [(0, 39, 5)] * 6
    assert sum(calls) == 18 and sum(1 for c in calls if c) >= 2  # one script per look-up, spread over nodes


def _evalsha_calls(port: int) -> int:
    out = subprocess.run(
        ["redis-cli", "-p", str(port), "info", "commandstats"], capture_output=True, text=True
    ).stdout
    total = 0
    for line in out.splitlines():
        if line.startswith(("cmdstat_evalsha:", "cmdstat_eval:")):
            total += int(line.split("calls=")[1].split(",")[0])
    return total


def test_replicas_share_tenants_and_prefixes_through_the_cluster(cluster, tmp_path):
    from tests.support.gateways import replicas
    from tests.support.payloads import CHAT
    from tests.support.sdk_clients import oai

    url, _, _ = cluster
    store = f"{url}?key_prefix=pg-cluster-e2e:"
    assert shared_secret(store) == shared_secret(store)  # created once, read after
    # A fresh cluster client maps the slots and loads the script on its first call: slower than the
    # 100 ms production deadline on a loaded machine (the deadline itself is tested in test_guard.py).
    with replicas(tmp_path, store=store, store_timeout=2.0) as ((a, b), (app_a, app_b)):
        assert app_a.state.gate.tenants.tenant_of_key(b"k") == app_b.state.gate.tenants.tenant_of_key(b"k")
        first = oai(a).chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        second = oai(b).chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        assert first.headers["x-prefixgate-prefix-segments"] == "0"
        assert int(second.headers["x-prefixgate-prefix-segments"]) > 0
    assert TenantHasher.for_config(ProxyConfig(state_dir=tmp_path / "x", store=store)).pending_store is None


def test_a_lost_node_never_fails_a_look_up(own_cluster):
    """One master killed: look-ups answer or say unknown (None) within the guard's
    deadline, only that node's breaker opens (once), the other nodes' tenants are still
    answered, and nothing raises."""
    from proxy.store.guard import GuardedStore

    url, ports, procs = own_cluster

    async def scenario():
        store = GuardedStore(
            RedisStore(f"{url}?key_prefix=pg-cluster-loss:", {"openai": 30.0}), deadline_s=0.2
        )
        try:
            tenants = [f"tenant-{i}" for i in range(12)]
            before = [await store.seen(t, "openai", [A, B]) for t in tenants]
            procs[0].kill()
            procs[0].wait(timeout=5)
            answers, slowest = [], 0.0
            for t in tenants:
                started = time.monotonic()
                answers.append(await store.seen(t, "openai", [A, B]))
                slowest = max(slowest, time.monotonic() - started)
            return (
                before,
                answers,
                slowest,
                {str(s): b.openings for s, b in store.breakers.items() if b.openings},
            )
        finally:
            await store.aclose()

    before, answers, slowest, openings = asyncio.run(scenario())
    assert before == [0] * 12
    assert all(a is None or a == 2 for a in answers)
    assert None in answers and 2 in answers and slowest < 1.0
    # The lost node's breaker opened, once. On a loaded machine a surviving node's look-up can
    # miss its deadline too while redis-py re-reads the slot map after the loss (a cancelled
    # refresh closes its connections): that node's own breaker may open once, never the lost one's twice.
    assert openings.get(f"127.0.0.1:{ports[0]}") == 1 and set(openings.values()) == {1}
