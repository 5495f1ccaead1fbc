"""proxy.store.guard: a store that hangs or fails costs one deadline, then nothing until a probe answers."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import httpx
import pytest
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.store import MemoryStore
from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker
from proxy.store.guard import DEFAULT_DEADLINE_S, GuardedStore, guarded

A, B = b"\x01" * 16, b"\x02" * 16
DEADLINE = 0.05


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Fake(PrefixStore):
    """A remote store: answers, hangs or fails, in ``seen`` and ``ping`` separately."""

    def __init__(self) -> None:
        self.mode = "ok"  # "ok" | "hang" | "fail"
        self.ping_mode = "ok"
        self.calls = 0
        self.pings = 0
        self.pinging = 0
        self.most_pinging = 0
        self.closed = False

    def ready(self) -> bool:
        return True

    async def _act(self, mode: str) -> None:
        if mode == "hang":
            await asyncio.Event().wait()
        if mode == "fail":
            raise ConnectionError("down")

    async def seen(self, tenant, provider, hashes) -> int:
        self.calls += 1
        await self._act(self.mode)
        return len(hashes)

    async def ping(self) -> bool:
        self.pings += 1
        self.pinging += 1
        self.most_pinging = max(self.most_pinging, self.pinging)
        try:
            await self._act(self.ping_mode)
            return True
        finally:
            self.pinging -= 1

    async def aclose(self) -> None:
        self.closed = True


def guard(fake: Fake, clock: Clock, deadline: float = DEADLINE) -> GuardedStore:
    """A guard whose breaker probes without jitter: 0.1 s after opening, then 0.2, 0.4, … after each failed probe."""
    return GuardedStore(fake, deadline, breaker=Breaker(clock=clock, jitter=0.0))


async def settle(store: GuardedStore) -> None:
    """Let a background probe finish (it is bounded by the deadline)."""
    task = store.probes.latest
    if task is not None:
        await asyncio.wait_for(asyncio.shield(task), 5)


def test_a_hung_store_costs_one_deadline_then_nothing():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        assert await store.seen("t", "openai", [A, B]) == 2
        fake.mode = fake.ping_mode = "hang"
        started = time.perf_counter()
        assert await store.seen("t", "openai", [A, B]) is None
        first = time.perf_counter() - started
        started = time.perf_counter()
        later = [await store.seen("t", "openai", [A, B]) for _ in range(200)]
        rest = time.perf_counter() - started
        return fake, store, first, later, rest

    fake, store, first, later, rest = asyncio.run(scenario())
    assert DEADLINE <= first < DEADLINE + 0.5
    assert later == [None] * 200 and rest < 0.5
    assert fake.calls == 2  # the store was never asked again while open
    assert fake.pings == 0  # and not probed: the fake clock did not move
    assert store.breaker.state == "open" and store.breaker.last_error == "TimeoutError"


def test_ready_is_false_while_open_so_the_caller_never_awaits():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        fake.mode = "fail"
        assert await store.seen("t", "openai", [A]) is None
        return store.ready(), fake.calls

    assert asyncio.run(scenario()) == (False, 1)


def test_probes_back_off_and_never_two_at_once():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock, deadline=0.2)
        fake.mode = fake.ping_mode = "hang"
        await store.seen("t", "openai", [A])
        for _ in range(9):  # 90 ms of fake time: no probe yet
            clock.now += 0.01
            assert not store.ready()
        assert fake.pings == 0
        clock.now += 0.01
        assert not store.ready()
        await asyncio.sleep(0)
        assert fake.pings == 1 and store.breaker.probing
        for _ in range(50):  # the probe hangs; fake seconds pass; still one in flight
            clock.now += 0.5
            assert not store.ready()
            await asyncio.sleep(0)
        assert fake.pings == 1 and fake.most_pinging == 1
        await settle(store)  # the probe's deadline ends it; the next one is due 0.2 s after that
        assert not store.breaker.probing and store.breaker.state == "open"
        assert store.breaker.to_json()["backoff_s"] == 0.2
        clock.now += 0.19
        assert not store.ready()
        await asyncio.sleep(0)
        assert fake.pings == 1
        clock.now += 0.01
        assert not store.ready()  # due: the second probe starts
        await asyncio.sleep(0)
        assert fake.pings == 2
        await settle(store)
        for _ in range(10):  # right after it, none again until its (doubled) backoff has passed
            assert not store.ready()
        await asyncio.sleep(0)
        return fake, store

    fake, store = asyncio.run(scenario())
    assert fake.pings == 2 and fake.most_pinging == 1 and fake.calls == 1
    assert store.breaker.to_json()["backoff_s"] == 0.4
    assert store.lookups == {
        "ok": 0,
        "unavailable": 1,
        "skipped": 9 + 1 + 50 + 1 + 1 + 10,
    }  # every ready() that said False


def test_a_probe_that_answers_closes_it_and_the_store_is_used_again(caplog):
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        fake.mode = "fail"
        assert await store.seen("t", "openai", [A]) is None
        fake.mode = "ok"
        clock.now += 1.0
        assert not store.ready()  # the probe starts in the background; this request skips
        await settle(store)
        return store, await store.seen("t", "openai", [A, B]), fake

    with caplog.at_level("INFO", logger="prefixgate.store"):
        store, answer, fake = asyncio.run(scenario())
    assert answer == 2 and store.breaker.state == "closed" and fake.calls == 2
    assert caplog.text.count("prefix store failed") == 1 and "answers again" in caplog.text


def test_a_late_answer_does_not_close_it():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock, deadline=2.0)
        gate = asyncio.Event()
        order = []

        async def slow_then_fast(tenant, provider, hashes):
            order.append(tenant)
            if tenant == "slow":
                await gate.wait()
                return 1
            raise ConnectionError("down")

        fake.seen = slow_then_fast
        slow = asyncio.create_task(store.seen("slow", "openai", [A]))
        await asyncio.sleep(0)
        assert await store.seen("fast", "openai", [A]) is None  # opens the breaker
        gate.set()
        return await slow, store.breaker.state

    assert asyncio.run(scenario()) == (1, "open")  # its own answer stands; only a probe closes


def test_a_cancelled_caller_is_not_a_store_failure():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock, deadline=5.0)
        fake.mode = "hang"
        task = asyncio.create_task(store.seen("t", "openai", [A]))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return store.breaker.state

    assert asyncio.run(scenario()) == "closed"


def test_health_is_bounded_by_the_deadline_and_probes_when_due():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        ok = await store.health()
        fake.ping_mode = "hang"
        started = time.perf_counter()
        hung = await store.health()  # closed: a PING, bounded; it fails and opens the breaker
        took = time.perf_counter() - started
        pings = fake.pings
        skipped = await store.health()  # open, no probe due: answers at once, no PING
        after_skip = fake.pings
        fake.ping_mode = "ok"
        clock.now += 1.0
        back = await store.health()  # open and due: an inline probe, which answers
        return ok, hung, took, pings, skipped, after_skip, back

    ok, hung, took, pings, skipped, after_skip, back = asyncio.run(scenario())
    assert ok["ok"] and ok["state"] == "closed" and ok["deadline_ms"] == DEADLINE * 1000
    assert not hung["ok"] and hung["state"] == "open" and hung["last_error"] == "TimeoutError"
    assert took < DEADLINE + 0.5
    assert not skipped["ok"] and after_skip == pings
    assert back["ok"] and back["state"] == "closed"


def test_aclose_cancels_a_probe_in_flight_and_closes_the_store():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock, deadline=5.0)
        fake.mode = "fail"
        fake.ping_mode = "hang"
        await store.seen("t", "openai", [A])
        clock.now += 1
        store.ready()
        await asyncio.sleep(0)
        assert store.breaker.probing
        await store.aclose()
        return store, fake

    store, fake = asyncio.run(scenario())
    assert fake.closed and not store.breaker.probing


def test_guarded_wraps_remote_stores_only():
    memory = MemoryStore(10)
    assert guarded(memory) is memory  # never waits: no breaker, no cost
    wrapped = guarded(Fake(), 0.07)
    assert isinstance(wrapped, GuardedStore) and wrapped.deadline_s == 0.07
    assert guarded(wrapped) is wrapped
    assert GuardedStore(Fake()).deadline_s == DEFAULT_DEADLINE_S == ProxyConfig().store_timeout
    with pytest.raises(ValueError):
        GuardedStore(Fake(), 0)
    with pytest.raises(ValueError):
        ProxyConfig(store_timeout=0)


# -- through the app -------------------------------------------------------------------------

CHAT = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "system", "content": "be brief " * 50}, {"role": "user", "content": "hi"}],
}


def test_through_the_app_unknown_everywhere_and_the_store_is_skipped(state_dir, tmp_path, caplog):
    caplog.set_level("INFO", logger="prefixgate.access")
    fake = Fake()
    ledger = tmp_path / "ledger.sqlite"
    cfg = ProxyConfig(
        openai_base="http://openai.test/v1",
        anthropic_base="http://anthropic.test",
        state_dir=state_dir,
        ledger=str(ledger),
        store_timeout=DEADLINE,
    )

    def upstream(request):
        return httpx.Response(
            200,
            json={
                "id": "x",
                "choices": [],
                "usage": {
                    "prompt_tokens": 2000,
                    "completion_tokens": 5,
                    "prompt_tokens_details": {"cached_tokens": 0},
                },
            },
        )

    app = create_app(cfg, transport=httpx.MockTransport(upstream), store=fake)
    with TestClient(app) as client:
        known = client.post("/v1/chat/completions", json=CHAT)
        fake.mode = fake.ping_mode = "hang"
        started = time.perf_counter()
        first = client.post("/v1/chat/completions", json=CHAT)
        first_s = time.perf_counter() - started
        times = []
        for _ in range(5):
            started = time.perf_counter()
            r = client.post("/v1/chat/completions", json=CHAT)
            times.append(time.perf_counter() - started)
            assert r.status_code == 200 and r.headers["x-prefixgate-prefix-segments"] == "unknown"
        health = client.get("/prefixgate/health")
        stats = client.get("/prefixgate/stats").json()
        metrics = client.get("/prefixgate/metrics").text
    assert known.headers["x-prefixgate-prefix-segments"] == "2"  # the fake says every segment repeated
    assert first.status_code == 200 and first_s < DEADLINE + 0.5
    assert (
        first.headers["x-prefixgate-prefix-segments"]
        == first.headers["x-prefixgate-prefix-bytes"]
        == "unknown"
    )
    assert max(times) < 0.5
    assert fake.calls == 2  # the five while open never reached the store
    assert health.status_code == 503 and health.json()["breaker"]["state"] == "open"
    assert stats["requests"] == 7 and stats["prefix_unknown"] == 6 and stats["prefix_hits"] == 1
    assert 'prefixgate_prefix_unknown_total{provider="openai"} 6.0' in metrics
    assert caplog.text.count("prefix=unknown/2") == 6 and caplog.text.count("prefix=2/2") == 1
    rows = (
        sqlite3.connect(ledger)
        .execute("SELECT prefix_segments, prefix_bytes, missed_usd FROM requests ORDER BY id")
        .fetchall()
    )
    assert len(rows) == 7 and rows[0][0] == 2
    assert all(r == (None, None, None) for r in rows[1:])  # NULL, never 0: unknown is not a miss
    states = [r[0] for r in sqlite3.connect(ledger).execute("SELECT store FROM requests ORDER BY id")]
    assert states == ["ok", "unavailable", *["skipped"] * 5]  # the row says why it is unknown
    assert health.json()["breaker"]["lookups"] == {"ok": 1, "unavailable": 1, "skipped": 5}
    assert (
        health.json()["store_error"] == "TimeoutError" and health.json()["breaker"]["backoff_s"] is not None
    )


def test_hold_until_skips_the_store_until_its_work_ends_and_health_says_why():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        done = asyncio.Event()
        store.hold_until(done.wait, "waiting for the secret")
        held = store.ready(), await store.seen("t", "openai", [A]), await store.health()
        done.set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return held, store.ready(), await store.seen("t", "openai", [A]), await store.health(), fake

    (ready, seen, health), ready_after, seen_after, health_after, fake = asyncio.run(scenario())
    assert (ready, seen) == (False, None)
    assert (
        not health["ok"]
        and health["cause"] == health["held"] == "waiting for the secret"
        and health["state"] == "closed"
    )
    assert (
        ready_after and seen_after == 1 and fake.calls == 1
    )  # only the look-up after the hold reached the store
    assert health_after["ok"] and health_after["cause"] is None and health_after["held"] is None
    assert health_after["lookups"] == {"ok": 1, "unavailable": 0, "skipped": 2}


def test_aclose_cancels_a_hold_that_never_ends():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        store.hold_until(asyncio.Event().wait, "forever")
        task = store._hold_task
        await asyncio.sleep(0)
        await store.aclose()
        return task, store, fake

    task, store, fake = asyncio.run(scenario())
    assert task.cancelled() and fake.closed


def test_a_hold_whose_work_fails_stays_held(caplog):
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)

        async def broken():
            raise ValueError("not hex")

        store.hold_until(broken, "waiting for the secret")
        await asyncio.sleep(0.01)
        return store.ready(), store.held, fake.calls

    assert asyncio.run(scenario()) == (False, "waiting for the secret", 0)
    assert "stays skipped" in caplog.text


# -- scopes (one breaker per Cluster node) and recovery work ---------------------------------


class Scoped(Fake):
    """A store over two nodes: tenants starting with "a" live on node-a, the others on node-b;
    a node in ``down`` fails its look-ups and pings."""

    scoped = True

    def __init__(self) -> None:
        super().__init__()
        self.down: set[str] = set()
        self.nodes = ["node-a", "node-b"]
        self.pinged: list[str | None] = []

    def scope(self, tenant: str) -> str:
        return "node-a" if tenant.startswith("a") else "node-b"

    def scopes(self) -> list[str]:
        return list(self.nodes)

    def stale(self, scope) -> bool:
        return scope not in self.nodes

    async def seen(self, tenant, provider, hashes) -> int:
        self.calls += 1
        if self.scope(tenant) in self.down:
            raise ConnectionError("node lost")
        return len(hashes)

    async def ping(self, scope=None) -> bool:
        self.pinged.append(scope)
        if scope in self.down:
            raise ConnectionError("node lost")
        return True


def test_a_lost_node_skips_only_the_tenants_on_it():
    async def scenario():
        fake, clock = Scoped(), Clock()
        store = guard(fake, clock)
        fake.down.add("node-a")
        first = await store.seen("alice", "openai", [A])  # fails: node-a's breaker opens
        after = [
            store.ready("alice"),
            store.ready("anna"),
            store.ready("bob"),
            await store.seen("bob", "openai", [A, B]),
        ]
        health = await store.health()
        fake.down.clear()
        clock.now += 1.0
        assert not store.ready("alice")  # due: node-a's probe starts in the background
        await settle(store)
        return first, after, health, store.ready("alice"), await store.health(), store

    first, after, health, back, healthy, store = asyncio.run(scenario())
    assert first is None and after == [False, False, True, 2]
    assert store.breaker.state == "closed"  # the whole store's breaker never opened
    assert not health["ok"] and health["state"] == "open" and "node-a" in health["cause"]
    assert health["scopes"] == {"total": 2, "open": 1, "states": {"node-a": "open", "node-b": "closed"}}
    assert back and healthy["ok"] and healthy["scopes"]["open"] == 0
    assert health["lookups"] == {"ok": 1, "unavailable": 1, "skipped": 2}


def test_a_scope_the_store_no_longer_maps_is_forgotten():
    async def scenario():
        fake, clock = Scoped(), Clock()
        store = guard(fake, clock)
        fake.down.add("node-a")
        await store.seen("alice", "openai", [A])
        fake.nodes = ["node-b", "node-c"]  # the map changed: node-a is gone (its slots moved)
        return await store.health()

    health = asyncio.run(scenario())
    assert health["ok"] and set(health["scopes"]["states"]) == {"node-b", "node-c"}


def test_recovery_work_runs_before_the_store_is_used_again():
    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        calls = []

        async def work():
            calls.append(store.breaker.state)
            if len(calls) == 1:
                raise ConnectionError("still coming up")

        store.on_recovery(work)
        fake.mode = "fail"
        await store.seen("t", "openai", [A])
        fake.mode = "ok"
        clock.now += 1.0
        store.ready()
        await settle(store)  # the PING answers, the work fails: still open
        failed_once = store.breaker.state
        clock.now += 1.0
        store.ready()
        await settle(store)
        return calls, failed_once, store.breaker.state

    calls, failed_once, state = asyncio.run(scenario())
    assert calls == ["open", "open"]  # ran while the store was still skipped
    assert failed_once == "open" and state == "closed"


def test_lost_data_runs_the_recovery_work_once_at_a_time():
    async def scenario():
        fake, clock = Fake(), Clock()
        fake.on_lost_data = None
        store = guard(fake, clock)
        release, runs = asyncio.Event(), []

        async def work():
            runs.append(1)
            await release.wait()

        store.on_recovery(work)
        fake.on_lost_data()  # the inner store saw NOSCRIPT: Redis restarted
        fake.on_lost_data()  # a second look-up meanwhile: no second run
        await asyncio.sleep(0)
        release.set()
        await store.probes.recovery_task
        return runs, store.breaker.state

    assert asyncio.run(scenario()) == ([1], "closed")


def test_health_never_waits_on_recovery_work_longer_than_the_deadline(monkeypatch):
    import proxy.store.probes as probes_module

    monkeypatch.setattr(probes_module, "RECOVERY_DEADLINE_S", 3600.0)  # awaiting the work inline would hang

    async def scenario():
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        never = asyncio.Event()
        store.on_recovery(never.wait)  # a write-back stuck on a Redis that answers PING but nothing else
        fake.mode = "fail"
        await store.seen("t", "openai", [A])
        fake.mode = "ok"
        clock.now += 1.0  # a probe is due: health starts it, but must not wait for its recovery work
        health = await asyncio.wait_for(store.health(), 30.0)  # a hang guard only, not a speed check
        await store.aclose()
        return health

    health = asyncio.run(scenario())
    assert not health["ok"] and health["state"] == "open" and health["probing"]


class ManyScopes(Fake):
    """A scoped store whose slot map is being rebuilt: every tenant is its own ``slot N`` scope."""

    scoped = True

    def scope(self, tenant: str) -> str:
        return f"slot {tenant}"

    async def ping(self, scope=None) -> bool:
        return await super().ping()


def test_ready_creates_no_breaker_for_a_scope_that_never_failed():
    async def scenario():
        store = guard(ManyScopes(), Clock())
        for i in range(1000):
            assert store.ready(str(i))
        return len(store.breakers)

    assert asyncio.run(scenario()) == 1  # only the whole store's


def test_a_probe_that_closes_a_scope_forgets_its_breaker():
    async def scenario():
        fake, clock = ManyScopes(), Clock()
        store = guard(fake, clock)
        fake.mode = "fail"
        for i in range(50):
            await store.seen(str(i), "openai", [A])
        opened = len(store.breakers)
        fake.mode = "ok"
        clock.now += 1.0
        for i in range(50):
            store.ready(str(i))
            await settle(store)
        return opened, len(store.breakers), [store.ready(str(i)) for i in range(50)]

    opened, left, ready = asyncio.run(scenario())
    assert opened == 51 and left == 1 and all(ready)


def _pending_hasher(monkeypatch, shared: bytes):
    from proxy import tenant as tenant_module

    monkeypatch.setattr(tenant_module, "_from_store", lambda url: shared)
    return tenant_module.TenantHasher(b"L" * 32, pending_store="redis://127.0.0.1:1/0")


def test_a_tenant_hashed_before_the_shared_secret_was_read_is_never_recorded(monkeypatch):
    """A request hashed with the install's tenant.key while the secret was missing, whose
    look-up runs after the hold ended, must not record a replica-local tenant in Redis."""

    async def scenario():
        hasher = _pending_hasher(monkeypatch, b"S" * 32)
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        store.hold_until(lambda: hasher.fetch_shared(0.001, 0.001), "waiting for the secret")
        local = hasher.tenant_of_key(b"sk-1")  # arrived while held: the install's tenant
        await asyncio.wait_for(store._hold_task, 5)
        late = store.ready(local), await store.seen(local, "openai", [A]), fake.calls
        shared = hasher.tenant_of_key(b"sk-1")
        return local, shared, late, await store.seen(shared, "openai", [A]), fake.calls

    local, shared, late, now, calls = asyncio.run(scenario())
    assert local != shared
    assert late == (False, None, 0)  # skipped: never recorded under the replica-local tenant
    assert now == 1 and calls == 1


def test_a_tenant_hashed_with_a_secret_the_replica_dropped_is_never_recorded(monkeypatch):
    """The write-back found another secret in the store and adopted it: a look-up for a
    tenant hashed with the old one (a request in flight) is skipped."""
    from proxy import tenant as tenant_module

    monkeypatch.setattr(tenant_module, "_write_back", lambda url, secret: b"N" * 32)

    async def scenario():
        hasher = tenant_module.TenantHasher(b"O" * 32, shared_store="redis://127.0.0.1:1/0")
        fake, clock = Fake(), Clock()
        store = guard(fake, clock)
        old = hasher.tenant_of_key(b"sk-1")
        before = await store.seen(old, "openai", [A])
        await hasher.reassert_shared()
        return (
            before,
            await store.seen(old, "openai", [A]),
            await store.seen(hasher.tenant_of_key(b"sk-1"), "openai", [A]),
            fake.calls,
        )

    assert asyncio.run(scenario()) == (1, None, 1, 2)


class SecretOnNodeA(Scoped):
    """The shared secret's key lives on node-a: only node-a's return needs the write-back."""

    def recovers(self, scope) -> bool:
        return scope in (None, "node-a")


def test_a_node_coming_back_is_not_held_open_by_recovery_work_another_node_needs():
    async def scenario():
        fake, clock = SecretOnNodeA(), Clock()
        store = guard(fake, clock)
        runs = []

        async def write_back():  # the secret's node is down: the write-back cannot succeed
            runs.append(1)
            if "node-a" in fake.down:
                raise ConnectionError("node-a lost")

        store.on_recovery(write_back)
        fake.down.update({"node-a", "node-b"})
        await store.seen("alice", "openai", [A])
        await store.seen("bob", "openai", [A])
        fake.down.discard("node-b")  # node-b was only a blip
        clock.now += 1.0
        store.ready("bob")
        await settle(store)
        bob = store.ready("bob")
        fake.down.clear()
        clock.now += 1.0
        store.ready("alice")
        await settle(store)
        return bob, runs, store.ready("alice")

    bob, runs, alice = asyncio.run(scenario())
    assert bob and runs == [1] and alice  # node-b closed without the write-back; node-a's probe ran it


def test_breakers_of_scopes_gone_from_the_map_are_dropped_without_health():
    """Node names come and go (a Cluster whose nodes get new addresses): a scope that failed
    and left the map must not keep its breaker forever when nobody polls health."""

    async def scenario():
        fake, clock = Scoped(), Clock()
        store = guard(fake, clock)
        fake.down.add("node-a")
        await store.seen("alice", "openai", [A])
        fake.nodes = ["node-b", "node-c"]  # node-a left the map
        fake.down = {"node-b"}
        await store.seen("bob", "openai", [A])
        return set(store.breakers)

    assert asyncio.run(scenario()) == {None, "node-b"}
