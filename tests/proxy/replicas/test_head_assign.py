"""The heads' placement: even, a pure function of the set of heads, on each head's own first
choices; the window of recently seen heads."""

from __future__ import annotations

import collections
import random

import pytest

from proxy.replicas.head_assign import HeadWindow, assign
from proxy.replicas.rendezvous import ranked

URLS = [f"http://10.0.0.{i}:8000/v1" for i in range(4)]


def heads(n: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(16) for _ in range(n)]


@pytest.mark.parametrize("n_heads", [1, 3, 10, 11, 40])
@pytest.mark.parametrize("n_replicas", [1, 3, 4])
def test_every_head_is_placed_and_counts_differ_by_one_at_most(n_heads, n_replicas):
    hs = heads(n_heads)
    placed = assign(hs, URLS[:n_replicas])
    assert set(placed) == set(hs)
    counts = collections.Counter(placed.values())
    per = [counts.get(u, 0) for u in URLS[:n_replicas]]
    assert max(per) - min(per) <= 1


def test_the_placement_depends_only_on_the_set_of_heads_and_replicas():
    hs = heads(10)
    first = assign(hs, URLS)
    assert assign(list(reversed(hs)) + hs[:3], list(reversed(URLS))) == first  # order and repeats
    assert assign(hs[:9], URLS) != first or len(set(first.values())) < 4  # another set: its own


def test_a_head_gets_its_first_choice_while_that_replica_has_room():
    hs = heads(4)
    placed = assign(hs, URLS, slack=4)  # room for all anywhere: plain rendezvous
    assert placed == {h: ranked(h, URLS)[0] for h in hs}


def test_the_window_moves_its_version_only_when_the_set_moves():
    now = [1000.0]
    w = HeadWindow(window_s=10, max_heads=3, clock=lambda: now[0])
    w.touch(b"a")
    v = w.version
    w.touch(b"a")
    assert w.version == v and w.heads() == {b"a"}
    w.merge({b"a", b"z"})
    assert w.version == v + 1 and w.heads() == {b"a", b"z"}
    w.touch(b"z")  # seen elsewhere already: the set is the same
    assert w.version == v + 1
    now[0] += 11
    w.touch(b"b")  # a and z expired here; the others' set still has them
    assert w.heads() == {b"a", b"b", b"z"} and set(w.local()) == {b"b"}
    w.merge(set())
    assert w.heads() == {b"b"}
    for h in (b"c", b"d", b"e"):
        w.touch(h)
    assert set(w.local()) == {b"c", b"d", b"e"} and len(w) == 3  # at most max_heads of its own
    with pytest.raises(ValueError):
        HeadWindow(window_s=0)
