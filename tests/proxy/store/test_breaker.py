"""proxy.store.breaker: closed → open on failure, skipped while open, probes after a capped
exponential backoff (with jitter, reset on success), closes on a probe. A fake clock throughout."""

from __future__ import annotations

import pytest

from proxy.store.breaker import CLOSED, FIRST_BACKOFF_S, MAX_BACKOFF_S, OPEN, Backoff, Breaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def no_jitter(clock: Clock, **kw) -> Breaker:
    return Breaker(clock=clock, jitter=0.0, **kw)


def probe_times(b: Breaker, clock: Clock, seconds: float, step: float = 0.0125) -> list[float]:
    """Advance the clock in ``step``s for ``seconds``; every probe granted fails at once.
    The times (since the start) at which probes were granted."""
    start, granted = clock.now, []
    for _ in range(round(seconds / step)):
        clock.now += step
        if b.try_probe():
            granted.append(round(clock.now - start, 4))
            b.probe_done(False, "ConnectionError")
    return granted


def test_starts_closed_and_allows(clock):
    b = Breaker(clock=clock)
    assert b.state == CLOSED and b.allow()
    assert not b.try_probe()  # nothing to probe while closed
    assert b.to_json()["backoff_s"] is None and b.to_json()["next_probe_in_s"] is None


def test_a_failure_opens_it_and_it_skips(clock):
    b = Breaker(clock=clock)
    assert b.failure("TimeoutError") is True
    assert b.state == OPEN and not b.allow()
    assert b.failure("ConnectionError") is False  # already open: not a second opening
    assert b.openings == 1 and b.last_error == "ConnectionError"
    clock.now += 30
    assert not b.allow()  # time alone never closes it: only a probe does


def test_defaults_are_100_ms_doubling_to_a_5_s_cap():
    assert (FIRST_BACKOFF_S, MAX_BACKOFF_S) == (0.1, 5.0)
    b = Backoff(jitter=0.0)
    assert [round(b.next_delay(), 3) for _ in range(9)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
    b.reset()
    assert b.next_delay() == pytest.approx(0.1)


def test_probes_back_off_exponentially_up_to_the_cap(clock):
    b = no_jitter(clock)
    b.failure("ConnectionError")
    # 0.1 after the opening, then 0.2, 0.4, 0.8, 1.6, 3.2 after each failed probe, then 5 s apart
    assert probe_times(b, clock, 26.5) == [0.1, 0.3, 0.7, 1.5, 3.1, 6.3, 11.3, 16.3, 21.3, 26.3]
    assert b.probes == 10 and not b.allow()
    assert b.to_json()["backoff_s"] == 5.0


def test_jitter_only_shortens_a_wait_and_never_passes_the_cap(clock):
    draws = iter([1.0, 0.5] + [0.99] * 50)
    b = Breaker(clock=clock, jitter=0.2, rng=lambda: next(draws))
    b.failure("ConnectionError")
    assert b.to_json()["backoff_s"] == pytest.approx(0.08)  # 0.1 shortened by the full 20 %
    times = probe_times(b, clock, 40.0, step=0.01)
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert times[0] == pytest.approx(0.08, abs=0.011)
    assert gaps[0] == pytest.approx(0.18, abs=0.011)  # 0.2 shortened by 10 %
    assert all(g <= MAX_BACKOFF_S + 0.011 for g in gaps) and max(gaps) > 4.0


def test_replicas_with_different_draws_do_not_probe_in_step():
    a_clock, b_clock = Clock(), Clock()
    a = Breaker(clock=a_clock, rng=lambda: 0.0)
    b = Breaker(clock=b_clock, rng=lambda: 0.9)
    a.failure("ConnectionError")
    b.failure("ConnectionError")
    assert probe_times(a, a_clock, 12.0, 0.01) != probe_times(b, b_clock, 12.0, 0.01)


def test_only_one_probe_in_flight(clock):
    b = no_jitter(clock)
    b.failure("TimeoutError")
    clock.now += 0.1
    assert b.try_probe() and b.probing
    for _ in range(10):  # a slow probe: no second one starts, however long it takes
        clock.now += 1
        assert not b.try_probe()
    assert b.to_json()["next_probe_in_s"] is None  # none scheduled while one is in flight
    b.probe_done(False, "TimeoutError")
    assert not b.probing and not b.try_probe()  # the next waits its backoff, counted from this failure
    clock.now += 0.2
    assert b.try_probe()


def test_a_probe_that_answers_closes_it_and_resets_the_backoff(clock):
    b = no_jitter(clock)
    b.failure("TimeoutError")
    probe_times(b, clock, 6.0)  # the backoff grew to 3.2 s
    assert b.to_json()["backoff_s"] == 3.2
    clock.now += 10
    assert b.try_probe()
    assert b.probe_done(True) is True
    assert b.state == CLOSED and b.allow() and b.opened_at is None
    assert b.to_json()["state"] == "closed" and b.to_json()["backoff_s"] is None
    clock.now += 0.5
    assert b.failure("TimeoutError") is True and b.openings == 2
    assert b.to_json()["backoff_s"] == 0.1  # a new outage starts from the first step again
    clock.now += 0.099
    assert not b.try_probe()
    clock.now += 0.001
    assert b.try_probe() and b.probes == 1


def test_to_json_shows_the_state_and_the_backoff(clock):
    b = no_jitter(clock)
    b.failure("TimeoutError")
    clock.now += 0.05
    assert b.to_json() == {
        "state": "open",
        "open_for_s": 0.05,
        "last_error": "TimeoutError",
        "probing": False,
        "probes": 0,
        "openings": 1,
        "backoff_s": 0.1,
        "next_probe_in_s": 0.05,
    }
    clock.now += 0.05
    b.try_probe()
    b.probe_done(False, "ConnectionError")
    assert b.to_json()["backoff_s"] == 0.2 and b.to_json()["last_error"] == "ConnectionError"


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        Breaker(first_backoff_s=0)
    with pytest.raises(ValueError):
        Breaker(first_backoff_s=2.0, max_backoff_s=1.0)
    with pytest.raises(ValueError):
        Backoff(jitter=1.0)
