"""proxy.store.breaker: closed → open on failure, skipped while open, one probe per second, closes on a probe."""

from __future__ import annotations

import pytest

from proxy.store.breaker import CLOSED, OPEN, Breaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_starts_closed_and_allows(clock):
    b = Breaker(clock=clock)
    assert b.state == CLOSED and b.allow()
    assert not b.try_probe()  # nothing to probe while closed


def test_a_failure_opens_it_and_it_skips(clock):
    b = Breaker(clock=clock)
    assert b.failure("TimeoutError") is True
    assert b.state == OPEN and not b.allow()
    assert b.failure("ConnectionError") is False  # already open: not a second opening
    assert b.openings == 1 and b.last_error == "ConnectionError"
    clock.now += 30
    assert not b.allow()  # time alone never closes it: only a probe does


def test_first_probe_one_interval_after_opening(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    assert not b.try_probe()
    clock.now += 0.999
    assert not b.try_probe()
    clock.now += 0.001
    assert b.try_probe()


def test_at_most_one_probe_per_second(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    granted = []
    for step in range(40):  # 5 s in 125 ms steps (exact in binary), each probe failing at once
        clock.now += 0.125
        if b.try_probe():
            granted.append(clock.now)
            b.probe_done(False, "TimeoutError")
    assert len(granted) == 5
    assert all(later - earlier >= 1.0 for earlier, later in zip(granted, granted[1:]))
    assert b.probes == 5 and not b.allow()


def test_only_one_probe_in_flight(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    clock.now += 1
    assert b.try_probe() and b.probing
    for _ in range(10):  # a slow probe: no second one starts, however long it takes
        clock.now += 1
        assert not b.try_probe()
    b.probe_done(False, "TimeoutError")
    assert not b.probing
    assert b.try_probe()  # its interval passed long ago


def test_a_probe_that_answers_closes_it(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    clock.now += 1
    assert b.try_probe()
    assert b.probe_done(True) is True
    assert b.state == CLOSED and b.allow() and b.opened_at is None
    assert b.to_json()["state"] == "closed"


def test_reopens_after_closing_and_waits_a_full_interval_again(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    clock.now += 1
    b.try_probe()
    b.probe_done(True)
    clock.now += 0.1
    assert b.failure("TimeoutError") is True and b.openings == 2
    assert not b.try_probe()
    clock.now += 1
    assert b.try_probe() and b.probes == 1


def test_to_json_shows_the_state(clock):
    b = Breaker(clock=clock)
    b.failure("TimeoutError")
    clock.now += 2.5
    b.try_probe()
    assert b.to_json() == {"state": "open", "open_for_s": 2.5, "last_error": "TimeoutError",
                           "probing": True, "probes": 1, "openings": 1}


def test_interval_must_be_positive():
    with pytest.raises(ValueError):
        Breaker(probe_interval_s=0)
