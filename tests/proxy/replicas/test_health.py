"""One replica's health: N failures in a row take it out, a probe after the backoff brings it back."""

from __future__ import annotations

import pytest

from proxy.replicas.health import DOWN, PROBING, UP, HealthPolicy, ReplicaHealth


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def health(**kw) -> tuple[ReplicaHealth, Clock]:
    clock = Clock()
    policy = HealthPolicy(**{"failures_to_open": 3, "first_backoff_s": 1.0, "max_backoff_s": 8.0, **kw})
    return ReplicaHealth(policy, clock, rng=lambda: 0.0), clock  # no jitter: exact delays


def test_failures_in_a_row_take_it_out_and_a_success_between_resets_the_count():
    h, _ = health()
    assert not h.failure("connect") and not h.failure("connect")
    h.success()
    assert not h.failure("503") and not h.failure("503")
    assert h.in_rotation and h.state == UP
    assert h.failure("503")
    assert not h.in_rotation and h.state == DOWN
    assert h.to_json()["last_error"] == "503" and h.to_json()["failures"] == 5


def test_the_probe_waits_for_the_backoff_which_doubles_on_each_failed_probe():
    h, clock = health()
    for _ in range(3):
        h.failure("connect")
    delays = []
    for _ in range(4):
        opened = clock.now
        assert not h.try_probe()
        while not h.try_probe():
            clock.now += 0.25
        delays.append(clock.now - opened)
        assert h.state == PROBING and not h.try_probe()  # one probe at a time
        assert not h.probe_done(False, "still down")
    assert delays == [1.0, 2.0, 4.0, 8.0]
    clock.now += 8.0
    assert h.try_probe()
    assert h.probe_done(True)
    assert h.in_rotation and h.consecutive == 0


def test_a_success_of_a_request_begun_before_never_brings_it_back():
    h, _ = health(failures_to_open=1)
    h.failure("timeout")
    h.success()
    assert not h.in_rotation


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"failures_to_open": 0}, "failures_to_open"),
        ({"failures_to_open": True}, "failures_to_open"),
        ({"first_backoff_s": 0}, "backoff"),
        ({"first_backoff_s": 5, "max_backoff_s": 1}, "max_backoff_s"),
        ({"check_interval_s": -1}, "health_interval"),
        ({"check_timeout_s": 0}, "timeout"),
        ({"check_path": "health"}, "health_path"),
    ],
)
def test_bad_policies_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        HealthPolicy(**kw)
