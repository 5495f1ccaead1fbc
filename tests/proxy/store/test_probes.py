"""proxy.store.probes: a probe closes its breaker only when the ping and the recovery work both
succeed; the recovery work after lost data runs once at a time and never raises."""

from __future__ import annotations

import asyncio

import pytest

from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker
from proxy.store.probes import Probes
from proxy.store.scopes import ScopeBreakers


class Pinged(PrefixStore):
    def __init__(self, answers: bool = True, fails: bool = False) -> None:
        self.answers, self.fails, self.pings = answers, fails, 0

    async def ping(self, scope=None) -> bool:
        self.pings += 1
        if self.fails:
            raise ConnectionError("down")
        return self.answers


def opened(store: PrefixStore) -> tuple[Probes, Breaker]:
    scopes = ScopeBreakers(store, Breaker(first_backoff_s=0.001, jitter=0.0))
    scopes.whole.failure("ConnectionError")
    assert scopes.whole.next_probe_at is not None
    scopes.whole.next_probe_at = 0.0
    assert scopes.whole.try_probe()
    return Probes(scopes, 0.5), scopes.whole


@pytest.mark.parametrize(
    "store, recovery_fails, closes, error",  # error: the probe's failure (closed: the opening one stays)
    [
        (Pinged(), False, True, None),
        (Pinged(answers=False), False, False, "ConnectionError"),
        (Pinged(fails=True), False, False, "ConnectionError"),
        (Pinged(), True, False, "RuntimeError"),
    ],
)
def test_a_probe_closes_the_breaker_only_when_ping_and_recovery_succeed(store, recovery_fails, closes, error):
    async def scenario():
        probes, b = opened(store)
        ran = []

        async def work():
            ran.append(1)
            if recovery_fails:
                raise RuntimeError("write-back refused")

        probes.recovery.append(work)
        await probes.start(None, b)
        return b, ran, probes.running

    b, ran, running = asyncio.run(scenario())
    assert (b.state == "closed") is closes and not b.probing and running == {}
    assert b.last_error == ("ConnectionError" if closes else error)
    assert ran == ([] if store.fails or not store.answers else [1])


def test_a_probe_without_a_loop_is_not_left_in_flight():
    probes, b = opened(Pinged())
    with pytest.raises(RuntimeError):
        probes.start(None, b)
    assert not b.probing and b.state == "open"


def test_lost_data_runs_the_recovery_work_once_at_a_time_and_logs_its_failure(caplog):
    async def scenario():
        probes, _ = opened(Pinged())
        probes.lost_data()
        assert probes.recovery_task is None
        release, runs = asyncio.Event(), []

        async def work():
            runs.append(1)
            await release.wait()
            raise ConnectionError("Redis went away again")

        probes.recovery.append(work)
        probes.lost_data()
        first = probes.recovery_task
        probes.lost_data()
        assert probes.recovery_task is first and probes.tasks() == [first]
        release.set()
        await first
        return runs, probes.tasks()

    assert asyncio.run(scenario()) == ([1], [])
    assert "recovery work after Redis lost its data failed (ConnectionError)" in caplog.text
