"""When to create, use, refresh and forget a Gemini explicit cache: :class:`Tracker`.

Pure logic over a clock (tests pass a fake one): given a body's cuts, longest first, it answers
one :class:`Decision`: **use** the longest live entry (``refresh`` past half its TTL), or
**create** one for a cut seen ``after`` times within ``window_s`` (TTL from the observed reuse
gaps, clamped); failed creates and refusals back off, doubling from :data:`BACKOFF_S`.
Expiries count from when a call was *sent*. Memory is bounded (``max_keys``, oldest first out).
It makes no call, holds no API key, keeps no money and deletes nothing upstream.
See docs/providers.md (Gemini explicit caching, automated).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from proxy.gemini_cache.plan import Cut

MIN_TTL_S = 300
MAX_TTL_S = 3600
TTL_FACTOR = 3
BACKOFF_S = 60.0
PENDING_S = 120.0
#: An entry this close to its expiry is no longer referenced (clock skew, slow requests).
EXPIRY_MARGIN_S = 15.0
PENDING, READY, FAILED = "pending", "ready", "failed"


@dataclass(slots=True)
class Entry:
    """One cache, made or being made: ``since`` when its ``state`` was entered; ``name``
    (``cachedContents/…``) once ready, with the ``tokens`` the upstream counted; ``refusals``:
    times the upstream refused this prefix's cache (kept across re-creates); ``refresh_at``: no
    refresh before it (a failed one backs off)."""

    scope: str
    cut: Cut
    state: str = PENDING
    since: float = 0.0
    name: str = ""
    tokens: int = 0
    ttl_s: int = MIN_TTL_S
    expires_at: float = 0.0
    refreshing: bool = False
    failures: int = 0
    retry_at: float = 0.0
    refusals: int = 0
    refresh_at: float = 0.0


@dataclass(slots=True)
class Decision:
    use: Entry | None = None
    refresh: bool = False
    create: Entry | None = None


def ttl_for(times: Sequence[float]) -> int:
    """TTL_FACTOR × the p90 gap between ``times`` (sorted), clamped to [MIN_TTL_S, MAX_TTL_S]."""
    gaps = sorted(b - a for a, b in pairwise(times))
    if not gaps:
        return MIN_TTL_S
    p90 = gaps[min(len(gaps) - 1, math.ceil(0.9 * len(gaps)) - 1)]
    return int(min(MAX_TTL_S, max(MIN_TTL_S, math.ceil(TTL_FACTOR * p90))))


@dataclass
class Tracker:
    """``after``: sightings within ``window_s`` before a create; ``seen``: each cut's recent
    sightings (small lists: ~4x lighter than deques at the cap); ``held``: scope → no create
    before (after a failed one)."""

    after: int = 3
    min_tokens: Callable[[str], int] = field(default=lambda model: 4096)
    window_s: float = 3600.0
    max_keys: int = 50_000
    clock: Callable[[], float] = time.monotonic
    seen: OrderedDict[bytes, list[float]] = field(default_factory=OrderedDict)
    entries: OrderedDict[bytes, Entry] = field(default_factory=OrderedDict)
    held: OrderedDict[str, float] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        if self.after < 1:
            raise ValueError(f"--gemini-auto-cache-after must be >= 1, got {self.after}")

    def decide(self, scope: str, model: str, cuts: Sequence[Cut]) -> Decision:
        now = self.clock()
        decision = Decision()
        for cut in cuts:
            entry = self._live(cut.digest, now)
            if entry is not None and entry.state == READY:
                decision.use = entry
                if (
                    not entry.refreshing
                    and entry.expires_at - now < entry.ttl_s / 2
                    and now >= entry.refresh_at
                ):
                    entry.refreshing = decision.refresh = True
                break
        minimum = self.min_tokens(model)
        chosen: tuple[Cut, list[float]] | None = None
        keep = max(self.after, 16)
        for cut in cuts:
            if cut.tokens < minimum:
                continue
            times = [t for t in self.seen.pop(cut.digest, ()) if t > now - self.window_s][-(keep - 1) :]
            times.append(now)
            self.seen[cut.digest] = times
            if chosen is None and len(times) >= self.after:
                chosen = (cut, times)
        while len(self.seen) > self.max_keys:
            self.seen.popitem(last=False)
        if chosen is not None:
            cut, times = chosen
            # beside a cache in use, another only when it holds at least a minimum more (a growing chat
            # would otherwise buy a cache a turn)
            if decision.use is None or cut.tokens >= decision.use.cut.tokens + minimum:
                decision.create = self._claim(scope, cut, ttl_for(list(times)), now)
        return decision

    def _live(self, digest: bytes, now: float) -> Entry | None:
        entry = self.entries.get(digest)
        if entry is None:
            return None
        if entry.state == READY and entry.expires_at - EXPIRY_MARGIN_S <= now:
            del self.entries[digest]
            return None
        if entry.state == PENDING and now - entry.since > PENDING_S:
            self._fail(entry, now)
        return entry

    def _claim(self, scope: str, cut: Cut, ttl_s: int, now: float) -> Entry | None:
        """A new pending entry for ``cut``; None while one is pending, ready or backing off, or
        while a failed create of this scope holds its other prefixes too."""
        entry = self._live(cut.digest, now)
        if entry is not None and (entry.state != FAILED or now < entry.retry_at):
            return None
        if now < self.held.get(scope, now):
            return None
        failures, refusals = (entry.failures, entry.refusals) if entry is not None else (0, 0)
        entry = Entry(scope, cut, PENDING, now, ttl_s=ttl_s, failures=failures, refusals=refusals)
        self.entries[cut.digest] = entry
        while len(self.entries) > self.max_keys:
            self.entries.popitem(last=False)
        return entry

    def created(self, entry: Entry, name: str, tokens: int, ttl_s: int, at: float | None = None) -> None:
        """The create answered; ``at``: when it was sent (the ttl runs from no later), else now."""
        now = self.clock()
        entry.state, entry.since, entry.name, entry.tokens = READY, now, name, tokens
        entry.ttl_s, entry.expires_at, entry.failures = (
            ttl_s,
            (now if at is None else min(at, now)) + ttl_s,
            0,
        )
        self.held.pop(entry.scope, None)

    def failed(self, entry: Entry) -> None:
        self._fail(entry, self.clock())

    def _fail(self, entry: Entry, now: float) -> None:
        entry.failures += 1
        entry.state, entry.since = FAILED, now
        entry.retry_at = now + min(BACKOFF_S * 2 ** (entry.failures - 1), float(MAX_TTL_S))
        self.held.pop(entry.scope, None)
        self.held[entry.scope] = entry.retry_at
        while len(self.held) > self.max_keys:
            self.held.popitem(last=False)

    def refreshed(self, entry: Entry, expires_in_s: float | None, at: float | None = None) -> None:
        """A PATCH answered: the new expiry, from ``at`` (when it was sent) or now (None: it
        failed; the entry runs out as it is, and no other refresh for :data:`BACKOFF_S`)."""
        entry.refreshing = False
        now = self.clock()
        if expires_in_s is None:
            entry.refresh_at = now + BACKOFF_S
        else:
            entry.expires_at = (now if at is None else min(at, now)) + expires_in_s

    def refused(self, entry: Entry) -> bool:
        """The upstream refused ``entry``'s cache; False (nothing done) when the tracker holds
        another entry for its prefix by now."""
        if self.entries.get(entry.cut.digest) is not entry:
            return False
        now = self.clock()
        entry.refusals += 1
        entry.state, entry.since, entry.refreshing = FAILED, now, False
        entry.retry_at = (
            now if entry.refusals == 1 else now + min(BACKOFF_S * 2 ** (entry.refusals - 2), float(MAX_TTL_S))
        )
        return True

    def drop(self, digest: bytes) -> None:
        self.entries.pop(digest, None)
