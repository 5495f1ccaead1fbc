"""Per-replica counters: exact under threads, a hit rate from tokens, a snapshot for the stats page."""

from __future__ import annotations

import threading

from proxy.replicas.replica_stats import ReplicaStats


def test_counts_and_hit_rate():
    stats = ReplicaStats()
    assert stats.snapshot()["hit_rate"] is None
    stats.started()
    stats.started(spilled=True)
    assert stats.snapshot()["in_flight"] == 2
    stats.ended(prompt_tokens=1000, cached_tokens=750)
    stats.ended(error=True, retried=True)
    snap = stats.snapshot()
    assert snap == {
        "requests": 2,
        "in_flight": 0,
        "prompt_tokens": 1000,
        "cached_tokens": 750,
        "errors": 1,
        "retried_away": 1,
        "spilled": 1,
        "trials": 0,
        "hit_rate": 0.75,
    }


def test_threads_lose_no_update():
    stats = ReplicaStats()

    def work() -> None:
        for _ in range(2000):
            stats.started()
            stats.ended(prompt_tokens=3, cached_tokens=1)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = stats.snapshot()
    assert (snap["requests"], snap["in_flight"], snap["prompt_tokens"], snap["cached_tokens"]) == (
        16000,
        0,
        48000,
        16000,
    )
