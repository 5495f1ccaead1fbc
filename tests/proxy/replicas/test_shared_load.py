"""Shared in-flight counts: two proxies see each other's load; a hung board never delays a pick."""

from __future__ import annotations

import asyncio
import time

import pytest

from proxy.replicas.replica_set import ReplicaSet
from proxy.replicas.shared_load import MemoryLoadBoard, SharedLoad

URLS = ["http://r0:8000/v1", "http://r1:8000/v1", "http://r2:8000/v1"]


def pair(board) -> tuple[ReplicaSet, ReplicaSet]:
    sets = []
    for name in ("proxy-a", "proxy-b"):
        rs = ReplicaSet(URLS, "least-loaded")
        rs.shared = SharedLoad(board, name, rs.local_load, interval_s=0.01, timeout_s=0.05)
        sets.append(rs)
    return sets[0], sets[1]


async def test_each_proxy_counts_the_others_in_flight():
    a, b = pair(MemoryLoadBoard())
    tickets = [a.start(a.pick(None)) for _ in range(2)]
    busy = {t.replica.url for t in tickets}
    await a.shared.refresh()
    await b.shared.refresh()
    assert b.shared.others() == {u: (1 if u in busy else 0) for u in URLS}
    assert b.loads() == {u: (1 if u in busy else 0) for u in URLS}
    idle = (set(URLS) - busy).pop()
    assert b.pick(None).replica.url == idle  # b sends its request where a has none in flight
    for t in tickets:
        a.done(t)
    await a.shared.refresh()
    await b.shared.refresh()
    assert b.shared.others() == dict.fromkeys(URLS, 0)


async def test_a_stale_snapshot_counts_as_nothing():
    now = [0.0]
    board = MemoryLoadBoard(lambda: now[0])
    a, b = pair(board)
    for rs in (a, b):
        rs.shared._clock = lambda: now[0]
    a.start(a.pick(None))
    await a.shared.refresh()
    await b.shared.refresh()
    assert sum(b.shared.others().values()) == 1
    now[0] += 10
    assert b.shared.others() == {}


class HungBoard:
    async def publish(self, proxy_id, counts, ttl_s):
        await asyncio.Event().wait()

    async def read(self):
        await asyncio.Event().wait()


async def test_a_hung_board_never_delays_a_pick_and_each_refresh_is_bounded():
    rs = ReplicaSet(URLS, "prefix")
    rs.shared = SharedLoad(HungBoard(), "p", rs.local_load, interval_s=0.01, timeout_s=0.05)
    rs.shared.start()
    try:
        await asyncio.sleep(0.02)  # a refresh is now stuck inside the board
        began = time.perf_counter()
        for i in range(200):
            assert rs.pick(str(i).encode()).replica is not None
        assert time.perf_counter() - began < 0.1
        started = time.perf_counter()
        assert await rs.shared.refresh() is False
        assert 0.04 <= time.perf_counter() - started < 0.5
        assert rs.shared.failures >= 1
    finally:
        await rs.shared.aclose()


def test_bad_timings_are_refused():
    with pytest.raises(ValueError, match="positive"):
        SharedLoad(MemoryLoadBoard(), "p", dict, interval_s=0)
