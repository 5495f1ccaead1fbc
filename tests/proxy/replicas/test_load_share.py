"""The policies and the bounded-load rule: the bound always holds, a free replica takes its keys."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.replicas.load_share import LEAST_LOADED, PREFIX, ROUND_ROBIN, Chooser, bound, bounded
from proxy.replicas.rendezvous import ranked

URLS = [f"http://r{i}:8000/v1" for i in range(5)]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 5),
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
    st.lists(st.tuples(st.booleans(), st.binary(min_size=1, max_size=4)), min_size=1, max_size=120),
)
def test_no_replica_passes_the_bound_after_it_takes_a_request(n, epsilon, events):
    """Arrivals (any keys, hot ones too) and departures in any order: the chosen replica never holds
    more than ceil((1 + ε) × the mean in flight, this request counted) once it took the request."""
    urls = URLS[:n]
    chooser = Chooser(PREFIX, epsilon)
    load = dict.fromkeys(urls, 0)
    for arrive, key in events:
        if arrive or not any(load.values()):
            cap = math.ceil(round((1 + epsilon) * (sum(load.values()) + 1) / n, 9))
            url, rank, reason = chooser.choose(key, urls, load)
            load[url] += 1
            assert load[url] <= cap
            assert (rank == 0) == (reason == "home")
            assert url == ranked(key, urls)[rank]
        else:
            busy = [u for u in urls if load[u]]
            load[busy[key[0] % len(busy)]] -= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 5), st.sampled_from([0.0, 0.25, 1.0]), st.lists(st.binary(min_size=1), max_size=150))
def test_arrivals_alone_stay_within_the_bound_of_the_total(n, epsilon, keys):
    urls = URLS[:n]
    chooser = Chooser(PREFIX, epsilon)
    load = dict.fromkeys(urls, 0)
    for key in keys:
        load[chooser.choose(key, urls, load)[0]] += 1
    if keys:
        assert max(load.values()) <= math.ceil(round((1 + epsilon) * len(keys) / n, 9))


def test_an_idle_pool_sends_each_key_home_and_a_busy_home_spills_to_the_next():
    chooser = Chooser(PREFIX, 0.25)
    key = b"system prompt of app 1"
    order = ranked(key, URLS)
    assert chooser.choose(key, URLS, {}) == (order[0], 0, "home")
    busy = {order[0]: 3}  # mean (3 + 1) / 5 = 0.8: the bound is 1
    assert chooser.choose(key, URLS, busy) == (order[1], 1, "spill")
    assert bounded(order, {order[0]: 1, order[1]: 1}, 0.25) == 2


def test_the_bound_is_the_ceiling_of_one_plus_epsilon_times_the_mean():
    assert bound([0, 0, 0, 0], 0.25) == 1
    assert bound([4, 4, 4, 3], 0.25) == 5  # mean 4, 1.25 × 4 = 5
    assert bound([2, 2], 0.0) == 3  # mean 2.5
    assert bound([1, 1, 0], 0.5) == 2  # mean 1 exactly: no float rounding up to 2.0000001 → 3


def test_round_robin_cycles_and_least_loaded_takes_the_emptiest():
    rr = Chooser(ROUND_ROBIN)
    assert [rr.choose(b"k", URLS[:3], {})[0] for _ in range(6)] == URLS[:3] * 2
    ll = Chooser(LEAST_LOADED)
    assert ll.choose(b"k", URLS[:3], {URLS[0]: 2, URLS[1]: 0, URLS[2]: 1})[0] == URLS[1]
    ties = {ll.choose(b"k", URLS[:3], {})[0] for _ in range(3)}
    assert ties == set(URLS[:3])  # equal loads rotate


def test_prefix_without_a_key_is_least_loaded():
    chooser = Chooser(PREFIX)
    assert chooser.choose(None, URLS[:2], {URLS[0]: 5})[0] == URLS[1]
    assert chooser.choose(None, URLS[:2], {URLS[0]: 5})[2] == LEAST_LOADED


@pytest.mark.parametrize(
    ("policy", "epsilon", "message"),
    [("hash", 0.25, "routing must be one of prefix, least-loaded, round-robin"), ("prefix", -1, "epsilon")],
)
def test_bad_settings_are_refused(policy, epsilon, message):
    with pytest.raises(ValueError, match=message):
        Chooser(policy, epsilon)
    with pytest.raises(ValueError, match="no healthy replica"):
        Chooser().choose(b"k", [], {})


def test_a_home_within_the_absolute_slack_keeps_its_request():
    order = ["a", "b", "c"]
    busy = {"a": 5, "b": 0, "c": 0}
    assert bounded(order, busy, 0.0) == 1  # 6 > ceil(6 / 3): the bound alone moves it
    assert bounded(order, busy, 0.0, slack=6) == 0  # 6 - 0 <= 6: no imbalance worth a cold cache
    assert bounded(order, busy, 0.0, slack=5) == 1
    with pytest.raises(ValueError, match="slack"):
        Chooser(PREFIX, 1.0, slack=-1)
