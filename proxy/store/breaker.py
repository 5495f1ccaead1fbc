"""A circuit breaker for one dependency: closed (use it) or open (skip it, probe it), and
the capped exponential backoff between its probes (:class:`Backoff`).

:meth:`Breaker.allow`, :meth:`failure`, :meth:`try_probe` and :meth:`probe_done` move it,
driven by the caller and a clock; only a probe closes it, never a call that began before
it opened.

It does no I/O, starts no tasks, and does not call or bound the dependency
(see :mod:`proxy.store.guard`). See docs/store.md.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

CLOSED = "closed"
OPEN = "open"
FIRST_BACKOFF_S = 0.1
MAX_BACKOFF_S = 5.0
JITTER = 0.2


class Backoff:
    """Delays for retrying a dependency: ``first_s``, doubling per failure up to ``max_s``;
    each delay handed out is shortened by up to ``jitter`` (a fraction) at random."""

    def __init__(
        self,
        first_s: float = FIRST_BACKOFF_S,
        max_s: float = MAX_BACKOFF_S,
        jitter: float = JITTER,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if first_s <= 0 or max_s < first_s:
            raise ValueError("backoff wants 0 < first_s <= max_s")
        if not 0 <= jitter < 1:
            raise ValueError("jitter must be in [0, 1)")
        self.first_s, self.max_s, self.jitter = first_s, max_s, jitter
        self._rng = rng
        #: the step the next delay is drawn from, before jitter
        self.current_s = first_s

    def next_delay(self) -> float:
        """The delay before the next try, then the step doubles (capped)."""
        delay = self.current_s * (1.0 - self.jitter * self._rng())
        self.current_s = min(self.max_s, self.current_s * 2)
        return delay

    def reset(self) -> None:
        self.current_s = self.first_s


class Breaker:
    """One dependency's breaker. Its clock times (``opened_at``: the failure that opened it,
    ``next_probe_at``: when the next probe is due, open and none in flight) come from ``clock``;
    ``last_error`` is the latest failure's exception name, ``probes`` counts the probes since it
    last opened, ``openings`` its openings since start, ``delay_s`` is the wait before the next
    probe (jitter applied)."""

    def __init__(
        self,
        first_backoff_s: float = FIRST_BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        clock: Callable[[], float] = time.monotonic,
        *,
        jitter: float = JITTER,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.backoff = Backoff(first_backoff_s, max_backoff_s, jitter, rng)
        self._clock = clock
        self.state = CLOSED
        self.opened_at: float | None = None
        self.last_error: str | None = None
        self.probing = False
        self.probes = 0
        self.openings = 0
        self.next_probe_at: float | None = None
        self.delay_s: float | None = None

    def sibling(self) -> Breaker:
        """A new closed breaker with this one's backoff, jitter and clock (one per store scope)."""
        b = self.backoff
        return Breaker(b.first_s, b.max_s, self._clock, jitter=b.jitter, rng=b._rng)

    def allow(self) -> bool:
        return self.state == CLOSED

    def failure(self, error: str) -> bool:
        """A call failed or missed its deadline. True when this opened the breaker."""
        self.last_error = error
        if self.state == OPEN:
            return False
        self.state = OPEN
        self.opened_at = now = self._clock()
        self.probes = 0
        self.openings += 1
        self.backoff.reset()
        self._schedule(now)
        return True

    def try_probe(self) -> bool:
        """True (and a probe is now in flight) when the breaker is open, no probe is in
        flight and the backoff since the last failure has passed."""
        if self.state != OPEN or self.probing:
            return False
        if self.next_probe_at is not None and self._clock() < self.next_probe_at:
            return False
        self.probing = True
        self.next_probe_at = None
        self.probes += 1
        return True

    def probe_done(self, ok: bool, error: str | None = None) -> bool:
        """The probe granted by :meth:`try_probe` finished. True when this closed the breaker."""
        self.probing = False
        if not ok:
            self.last_error = error or self.last_error
            if self.state == OPEN:
                self._schedule(self._clock())
            return False
        if self.state == CLOSED:
            return False
        self.state = CLOSED
        self.opened_at = self.next_probe_at = self.delay_s = None
        self.backoff.reset()
        return True

    def _schedule(self, now: float) -> None:
        self.delay_s = self.backoff.next_delay()
        self.next_probe_at = now + self.delay_s

    def to_json(self) -> dict:
        now = self._clock()
        return {
            "state": self.state,
            "open_for_s": None if self.opened_at is None else round(now - self.opened_at, 3),
            "last_error": self.last_error,
            "probing": self.probing,
            "probes": self.probes,
            "openings": self.openings,
            "backoff_s": None if self.delay_s is None else round(self.delay_s, 3),
            "next_probe_in_s": None
            if self.next_probe_at is None
            else round(max(0.0, self.next_probe_at - now), 3),
        }
