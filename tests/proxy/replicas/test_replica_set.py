"""The pool: picks, the books on each send, the retry rule in use, health and the snapshot."""

from __future__ import annotations

import pytest

from proxy.replicas.health import HealthPolicy
from proxy.replicas.rendezvous import ranked
from proxy.replicas.replica_set import NONE_HEALTHY, TRIAL, Pick, ReplicaSet, normalised_urls
from proxy.replicas.retry_rule import LOCAL, NOT_SENT, SENT

URLS = ["http://127.0.0.1:9001/v1", "http://127.0.0.1:9002/v1", "http://127.0.0.1:9003/v1"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pool(policy: str = "prefix", interval: float | None = 5.0, clock=None, slack: int = 0) -> ReplicaSet:
    health = HealthPolicy(failures_to_open=2, first_backoff_s=1.0, check_interval_s=interval)
    return ReplicaSet(URLS, policy, 0.25, health=health, clock=clock or Clock(), rng=lambda: 0.0, slack=slack)


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        ([], "non-empty"),
        ("http://a/v1", "non-empty"),
        (["http://a:1/v1", "http://a:1/v1/"], "twice"),
        (["ftp://a"], r"base_urls\[0\] must be an http"),
        (["http://u:p@a/v1"], "credentials"),
    ],
)
def test_bad_url_lists_are_refused(urls, message):
    with pytest.raises(ValueError, match=message):
        normalised_urls(urls)


def test_two_proxies_with_the_same_list_pick_the_same_replica_per_key():
    a, b = pool(), ReplicaSet(list(reversed(URLS)))
    for i in range(50):
        key = f"app-{i}".encode()
        assert a.pick(key).replica.url == b.pick(key).replica.url


def test_in_flight_moves_a_hot_key_to_its_next_replica():
    rs = pool()
    key = b"hot app"
    first = rs.pick(key)
    assert first.reason == "home"
    held = [rs.start(rs.pick(key)) for _ in range(6)]
    per = rs.local_load()
    assert max(per.values()) <= 3  # ceil(1.25 × 6 / 3)
    assert {rs.pick(key).reason for _ in range(1)} <= {"home", "spill"}
    for t in held:
        rs.done(t, 100, 80)
    snap = rs.snapshot()
    assert sum(r["requests"] for r in snap["replicas"]) == 6
    assert sum(r["spilled"] for r in snap["replicas"]) >= 1
    assert all(r["in_flight"] == 0 for r in snap["replicas"])


def test_an_unsent_failure_goes_to_another_replica_once():
    rs = pool()
    pick = rs.pick(b"k")
    ticket = rs.start(pick)
    step = rs.failed(ticket, NOT_SENT, "ConnectError")
    assert step.retry
    again = rs.pick(b"k", exclude={pick.replica.url})
    assert again.replica.url == ranked(b"k", URLS)[1]  # the key's next replica
    second = rs.start(again, attempt=2)
    assert not rs.failed(second, NOT_SENT, "ConnectError").retry  # not a third time
    snap = {r["url"]: r for r in rs.snapshot()["replicas"]}
    assert snap[pick.replica.url]["retried_away"] == 1 and snap[pick.replica.url]["errors"] == 1


def test_a_sent_request_is_never_sent_again_and_the_local_limit_is_not_the_replicas_fault():
    rs = pool()
    t = rs.start(rs.pick(b"k"))
    assert not rs.failed(t, SENT, "ReadTimeout").retry
    assert t.replica.health.consecutive == 1
    t2 = rs.start(rs.pick(b"k"))
    assert not rs.failed(t2, LOCAL, "PoolTimeout").retry
    assert t2.replica.health.consecutive == 1


def test_repeated_5xx_take_a_replica_out_and_every_replica_down_is_said():
    rs = pool()
    for _ in range(2):
        for r in rs.replicas:
            t = rs.start(rs.pick(None, exclude={x.url for x in rs.replicas if x is not r}))
            rs.answered(t, 503)
            rs.done(t)
    assert all(not r.health.in_rotation for r in rs.replicas)
    nothing = rs.pick(b"k")
    assert nothing.replica is None and nothing.reason == NONE_HEALTHY
    assert rs.snapshot()["none_healthy"] == 1
    with pytest.raises(ValueError, match="no replica"):
        rs.start(nothing)
    assert all(r["errors"] == 2 for r in rs.snapshot()["replicas"])


def test_with_active_checks_off_a_live_request_is_the_half_open_probe():
    clock = Clock()
    rs = pool(interval=None, clock=clock)
    down = rs.replicas[0]
    for _ in range(2):
        down.health.failure("ConnectError")
    assert rs.pick(b"k", exclude=()).reason != TRIAL  # backoff not over
    clock.now += 1.0
    trial = rs.pick(b"k")
    assert trial.reason == TRIAL and trial.replica is down
    assert rs.pick(b"k").reason != TRIAL  # one probe at a time
    t = rs.start(trial)
    rs.answered(t, 200)
    rs.done(t, 10, 0)
    assert down.health.in_rotation
    assert rs.snapshot()["replicas"][0]["trials"] == 1


def test_a_ticket_closes_once():
    rs = pool()
    t = rs.start(rs.pick(b"k"))
    rs.done(t, 10, 5)
    rs.done(t, 10, 5)
    rs.failed(t, SENT, "late")
    assert t.replica.stats.snapshot()["in_flight"] == 0
    assert t.replica.stats.snapshot()["prompt_tokens"] == 10


def test_a_body_broken_off_counts_against_the_replica():
    rs = pool()
    t = rs.start(rs.pick(b"k"))
    rs.answered(t, 200)
    rs.done(t, error="upstream_read_error")
    assert t.replica.health.consecutive == 1 and t.replica.stats.snapshot()["errors"] == 1


def test_app_heads_go_where_the_placement_put_them_evenly_and_spill_only_when_busy():
    rs = pool()
    keys = [f"app {i}".encode() * 8 for i in range(6)]
    for key in keys:
        rs.pick(key, head=True)
    homes = {key: rs.pick(key, head=True).replica.url for key in keys}
    assert sorted(list(homes.values()).count(u) for u in URLS) == [2, 2, 2]  # 6 heads, 3 replicas
    assert homes == {k: rs.placement(URLS)[k] for k in keys}
    other = ReplicaSet(list(reversed(URLS)))
    for key in reversed(keys):
        other.pick(key, head=True)
    assert {k: other.pick(k, head=True).replica.url for k in keys} == homes  # a second proxy agrees
    home = next(r for r in rs.replicas if r.url == homes[keys[0]])
    held = [rs.start(Pick(home, 0, "home")) for _ in range(4)]
    spill = rs.pick(keys[0], head=True)
    assert spill.reason == "spill" and spill.replica.url != homes[keys[0]]  # bound 0.25, slack 0
    for t in held:
        rs.done(t)
    assert rs.snapshot()["heads"] == 6 and sum(r["heads"] for r in rs.snapshot()["replicas"]) == 6
