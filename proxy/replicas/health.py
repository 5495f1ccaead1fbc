"""One replica's health: in rotation, or out with exponential backoff until a probe answers.

Passive: each connect error, timeout, broken answer or 5xx is a failure, any other answer a
success; ``failures_to_open`` failures in a row take the replica out of rotation through the
store's :class:`~proxy.store.breaker.Breaker` (backoff doubling from ``first_backoff_s`` to
``max_backoff_s``). Out of rotation, one probe at a time is let through (half-open): the active
check (:mod:`.health_checks`) or, with active checks off, one live request. Only a probe that
succeeds brings it back. It does no I/O; :class:`HealthPolicy` is checked in ``__post_init__``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from proxy.store.breaker import Breaker

UP = "up"
DOWN = "down"
PROBING = "probing"


def _positive(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


@dataclass(frozen=True)
class HealthPolicy:
    failures_to_open: int = 3  # failures in a row that take a replica out of rotation
    first_backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    check_interval_s: float | None = 5.0  # active checks; None: off (a live request is the probe)
    check_path: str = "/v1/models"  # "/health" for vLLM and SGLang; prefixgate local has /v1/models
    check_timeout_s: float = 2.0

    def __post_init__(self) -> None:
        n = self.failures_to_open
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"failures_to_open must be an integer >= 1, got {n!r}")
        if not _positive(self.first_backoff_s) or not _positive(self.max_backoff_s):
            raise ValueError("the health backoff must be positive seconds")
        if self.max_backoff_s < self.first_backoff_s:
            raise ValueError("max_backoff_s must be at least first_backoff_s")
        if self.check_interval_s is not None and not _positive(self.check_interval_s):
            raise ValueError(f"health_interval must be positive seconds, got {self.check_interval_s!r}")
        if not _positive(self.check_timeout_s):
            raise ValueError(f"the health check timeout must be positive, got {self.check_timeout_s!r}")
        if not isinstance(self.check_path, str) or not self.check_path.startswith("/"):
            raise ValueError(f"health_path must start with '/', got {self.check_path!r}")


class ReplicaHealth:
    def __init__(
        self,
        policy: HealthPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy or HealthPolicy()
        self.breaker = Breaker(self.policy.first_backoff_s, self.policy.max_backoff_s, clock, rng=rng)
        self.consecutive = 0  # failures in a row
        self.failures = 0  # since start
        self.last_error: str | None = None

    @property
    def in_rotation(self) -> bool:
        return self.breaker.allow()

    @property
    def state(self) -> str:
        if self.breaker.allow():
            return UP
        return PROBING if self.breaker.probing else DOWN

    def success(self) -> None:
        """An answer that was not a failure (never closes an open breaker: only a probe does)."""
        self.consecutive = 0

    def failure(self, error: str) -> bool:
        """A failure; True when it took the replica out of rotation."""
        self.consecutive += 1
        self.failures += 1
        self.last_error = error
        if self.breaker.allow() and self.consecutive >= self.policy.failures_to_open:
            return self.breaker.failure(error)
        return False

    def try_probe(self) -> bool:
        """Out of rotation and its backoff passed: True, and one probe is now in flight."""
        return self.breaker.try_probe()

    def probe_done(self, ok: bool, error: str | None = None) -> bool:
        """The probe granted by :meth:`try_probe` ended; True when it brought the replica back."""
        if ok:
            self.consecutive = 0
        else:
            self.failures += 1
            self.last_error = error or self.last_error
        return self.breaker.probe_done(ok, error)

    def to_json(self) -> dict:
        return {
            "state": self.state,
            "consecutive_failures": self.consecutive,
            "failures": self.failures,
            "last_error": self.last_error,
            "breaker": self.breaker.to_json(),
        }
