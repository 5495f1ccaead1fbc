"""Rendezvous hashing: only a lost replica's keys move, every process agrees, keys spread."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.replicas.rendezvous import home, ranked, weight

URLS = st.lists(
    st.integers(1, 60000).map(lambda p: f"http://10.0.0.1:{p}/v1"), min_size=2, max_size=9, unique=True
)
KEYS = st.lists(st.binary(min_size=1, max_size=24), min_size=1, max_size=60, unique=True)


@settings(max_examples=200, deadline=None)
@given(URLS, KEYS, st.data())
def test_losing_a_replica_moves_only_its_own_keys(urls, keys, data):
    lost = data.draw(st.sampled_from(urls))
    rest = [u for u in urls if u != lost]
    for key in keys:
        before, after = home(key, urls), home(key, rest)
        if before != lost:
            assert after == before
        else:
            assert after == ranked(key, urls)[1]  # its keys go to their second choice


@settings(max_examples=200, deadline=None)
@given(URLS, KEYS, st.randoms(use_true_random=False))
def test_the_order_does_not_depend_on_the_listing_order(urls, keys, rnd):
    shuffled = list(urls)
    rnd.shuffle(shuffled)
    for key in keys:
        assert ranked(key, urls) == ranked(key, shuffled)
        assert home(key, shuffled) == ranked(key, urls)[0]


def test_every_process_computes_the_same_order():
    """Another interpreter with another hash seed: the same weights (no use of Python's hash())."""
    urls = [f"http://replica-{i}:8000/v1" for i in range(5)]
    keys = [f"app-{i}".encode() for i in range(40)]
    code = f"from proxy.replicas.rendezvous import home\nprint([home(k, {urls!r}) for k in {keys!r}])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=os.getcwd()
    ).stdout
    assert out.strip() == str([home(k, urls) for k in keys])


def test_keys_spread_evenly():
    urls = [f"http://replica-{i}:8000/v1" for i in range(4)]
    counts = {u: 0 for u in urls}
    for i in range(8000):
        counts[home(i.to_bytes(8, "big"), urls)] += 1
    assert all(1700 < n < 2300 for n in counts.values()), counts


def test_weights_are_per_key_and_replica():
    assert weight(b"a", "http://x") == weight(b"a", "http://x")
    assert weight(b"a", "http://x") != weight(b"b", "http://x")
    assert weight(b"a", "http://x") != weight(b"a", "http://y")
    assert home(b"a", []) is None
