"""When the tracker creates, uses, refreshes and forgets an explicit cache, on a fake clock."""

from __future__ import annotations

import pytest

from proxy.gemini_cache.plan import Cut
from proxy.gemini_cache.tracker import (
    BACKOFF_S,
    EXPIRY_MARGIN_S,
    MAX_TTL_S,
    MIN_TTL_S,
    PENDING_S,
    Tracker,
    ttl_for,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


LONG = Cut(2, 3, b"long" * 4, 5000)
SHORT = Cut(1, 2, b"shrt" * 4, 3000)
TINY = Cut(0, 1, b"tiny" * 4, 100)


def tracker(clock: Clock, after: int = 3) -> Tracker:
    return Tracker(after=after, min_tokens=lambda model: 2048, clock=clock)


def test_ttl_from_the_observed_gaps():
    assert ttl_for([0.0]) == MIN_TTL_S
    assert ttl_for([0, 10, 20]) == MIN_TTL_S  # 3 × 10 s, floored at 5 minutes
    assert ttl_for([0, 200, 400, 600]) == 600  # 3 × p90 gap of 200 s
    assert (
        ttl_for([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 2400]) == 300
    )  # nine 100 s gaps and one outlier: p90 is 100 s
    assert ttl_for([0, 1500, 3000]) == MAX_TTL_S  # 3 × 1500 s, capped at an hour
    with pytest.raises(ValueError):
        Tracker(after=0)


def test_creates_the_longest_repeated_cut_after_n_sightings_within_the_window():
    clock = Clock()
    t = tracker(clock)
    assert t.decide("s", "m", [LONG, SHORT, TINY]).create is None
    clock.t += 100
    assert t.decide("s", "m", [SHORT, TINY]).create is None  # SHORT seen twice, LONG once
    clock.t += 100
    decision = t.decide("s", "m", [SHORT, TINY])  # SHORT's third: created; TINY is under the minimum
    assert (
        decision.create is not None
        and decision.create.cut == SHORT
        and decision.create.ttl_s == 300
        and decision.use is None
    )
    assert t.decide("s", "m", [SHORT]).create is None  # pending: no second create
    clock.t += 3600  # LONG's one sighting left the window
    assert t.decide("s", "m", [LONG]).create is None and t.decide("s", "m", [LONG]).create is None
    assert t.decide("s", "m", [LONG]).create is not None


def test_use_refresh_expiry_and_drop():
    clock = Clock()
    t = tracker(clock, after=1)
    entry = t.decide("s", "m", [SHORT]).create
    assert entry is not None and t.decide("s", "m", [SHORT]).use is None  # not created yet
    t.created(entry, "cachedContents/a", 3100, 600)
    used = t.decide("s", "m", [LONG, SHORT])
    assert used.use is entry and not used.refresh
    assert (
        used.create is None
    )  # LONG holds under a minimum more than the cache in use: not worth a second cache
    longer = Cut(3, 4, b"lngr" * 4, SHORT.tokens + 2048)
    assert t.decide("s", "m", [longer, SHORT]).create.cut == longer
    clock.t += 301  # under half the ttl left: one refresh at a time
    first, second = t.decide("s", "m", [SHORT]), t.decide("s", "m", [SHORT])
    assert first.refresh and not second.refresh and second.use is entry
    t.refreshed(entry, 600)
    assert entry.expires_at == clock.t + 600
    clock.t += 600 - EXPIRY_MARGIN_S  # too close to the expiry: no longer used
    assert t.decide("s", "m", [SHORT]).use is None
    t.drop(LONG.digest)
    assert LONG.digest not in t.entries


def test_failed_creates_back_off_and_stale_pending_ones_count_as_failed():
    clock = Clock()
    t = tracker(clock, after=1)
    entry = t.decide("s", "m", [SHORT]).create
    t.failed(entry)
    assert t.decide("s", "m", [SHORT]).create is None
    clock.t += BACKOFF_S
    again = t.decide("s", "m", [SHORT]).create
    assert again is not None and again.failures == 1
    t.failed(again)
    clock.t += BACKOFF_S
    assert t.decide("s", "m", [SHORT]).create is None  # doubled
    clock.t += BACKOFF_S
    third = t.decide("s", "m", [SHORT]).create
    assert third is not None
    clock.t += PENDING_S + 1  # never reported: failed, and backing off
    assert t.decide("s", "m", [SHORT]).create is None and third.state == "failed"


def test_memory_is_bounded():
    clock = Clock()
    t = Tracker(after=2, min_tokens=lambda model: 0, clock=clock, max_keys=10)
    for i in range(50):
        t.decide("s", "m", [Cut(0, 1, i.to_bytes(16, "big"), 10)])
    assert len(t.seen) == 10


def test_a_failed_refresh_backs_off_instead_of_patching_on_every_request():
    clock = Clock()
    t = tracker(clock, after=1)
    entry = t.decide("s", "m", [SHORT]).create
    t.created(entry, "cachedContents/a", 3100, 600)
    clock.t += 301
    assert t.decide("s", "m", [SHORT]).refresh
    t.refreshed(entry, None)  # the PATCH failed (a 500, a timeout)
    assert not t.decide("s", "m", [SHORT]).refresh and not t.decide("s", "m", [SHORT]).refresh
    clock.t += BACKOFF_S
    assert t.decide("s", "m", [SHORT]).refresh


def test_refusals_back_off_and_a_late_one_spares_the_new_entry():
    clock = Clock()
    t = tracker(clock, after=1)
    first = t.decide("s", "m", [SHORT]).create
    t.created(first, "cachedContents/a", 3100, 600)
    t.refused(first)  # lost upstream once: made again at once
    second = t.decide("s", "m", [SHORT]).create
    assert second is not None and second is not first
    t.refused(first)  # a late refusal of the old cache (a concurrent request): the new entry stays
    assert t.entries[SHORT.digest] is second and second.state == "pending"
    t.created(second, "cachedContents/b", 3100, 600)
    t.refused(second)  # refused again: now it backs off, no storm of paid creates
    assert t.decide("s", "m", [SHORT]).create is None and t.decide("s", "m", [SHORT]).use is None
    clock.t += BACKOFF_S
    assert t.decide("s", "m", [SHORT]).create is not None


def test_a_failed_create_holds_back_the_scopes_other_prefixes_too():
    """A growing chat shows a new prefix every turn: when creates fail (a cache Google counts
    under its minimum, a refused key), one per turn would be a storm of calls."""
    clock = Clock()
    t = tracker(clock, after=1)
    t.failed(t.decide("s", "m", [SHORT]).create)
    assert t.decide("s", "m", [LONG]).create is None  # same scope, another prefix: backing off too
    assert (
        t.decide("other", "m", [Cut(1, 2, b"othr" * 4, 3000)]).create is not None
    )  # another tenant is not held back
    clock.t += BACKOFF_S
    made = t.decide("s", "m", [LONG]).create
    assert made is not None
    t.created(made, "cachedContents/x", 5000, 600)
    t.failed(t.decide("s", "m", [Cut(3, 4, b"lngr" * 4, LONG.tokens + 2048)]).create)
    assert t.decide("s", "m", [LONG]).use is made  # a backing-off scope still uses what it has
