"""A circuit breaker for one dependency: closed (use it) or open (skip it, probe it).

States and moves, all driven by the caller and a clock (no I/O, no tasks, no sleeping):

- **closed**: :meth:`Breaker.allow` is True; the caller uses the dependency.
  :meth:`failure` (an error or a missed deadline) opens the breaker.
- **open**: :meth:`allow` is False; the caller skips the dependency without waiting on
  it. :meth:`try_probe` grants at most one probe at a time, and at most one per
  ``probe_interval_s`` (counted from the previous probe's start, the first one from the
  failure that opened the breaker). :meth:`probe_done` with ``ok=True`` closes it.

A success reported by a call that started before the breaker opened does not close it:
only a probe does, so a flapping dependency costs at most one deadline per opening. This
module does not call the dependency or bound its calls (see :mod:`proxy.store.guard`).
"""

from __future__ import annotations

import time
from typing import Callable

CLOSED = "closed"
OPEN = "open"


class Breaker:
    def __init__(self, probe_interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        if probe_interval_s <= 0:
            raise ValueError("probe_interval_s must be positive")
        self.probe_interval_s = probe_interval_s
        self._clock = clock
        self.state = CLOSED
        self.opened_at: float | None = None  # clock time of the failure that opened it
        self.last_error: str | None = None  # the latest failure, as an exception name
        self.probing = False  # a probe is in flight
        self.probes = 0  # probes started since the breaker last opened
        self.openings = 0  # times it opened since start
        self._last_probe: float = 0.0

    def allow(self) -> bool:
        return self.state == CLOSED

    def failure(self, error: str) -> bool:
        """A call failed or missed its deadline. True when this opened the breaker."""
        self.last_error = error
        if self.state == OPEN:
            return False
        self.state = OPEN
        self.opened_at = self._last_probe = self._clock()
        self.probes = 0
        self.openings += 1
        return True

    def try_probe(self) -> bool:
        """True (and a probe is now in flight) when the breaker is open, no probe is in
        flight and ``probe_interval_s`` passed since the last one started."""
        if self.state != OPEN or self.probing:
            return False
        now = self._clock()
        if now - self._last_probe < self.probe_interval_s:
            return False
        self.probing = True
        self._last_probe = now
        self.probes += 1
        return True

    def probe_done(self, ok: bool, error: str | None = None) -> bool:
        """The probe granted by :meth:`try_probe` finished. True when this closed the breaker."""
        self.probing = False
        if not ok:
            self.last_error = error or self.last_error
            return False
        if self.state == CLOSED:
            return False
        self.state = CLOSED
        self.opened_at = None
        return True

    def to_json(self) -> dict:
        now = self._clock()
        return {
            "state": self.state,
            "open_for_s": None if self.opened_at is None else round(now - self.opened_at, 3),
            "last_error": self.last_error,
            "probing": self.probing,
            "probes": self.probes,
            "openings": self.openings,
        }
