"""Counters of one replica: requests, in flight, prompt and cached tokens, errors, retries.

Safe to update from the event loop and read from any thread (one lock per replica; each
update is a few integer additions under it). :meth:`ReplicaStats.snapshot` is what
``/prefixgate/stats`` shows per replica, hit rate included (cached / prompt tokens). It
decides nothing (see :mod:`.replica_set`).
"""

from __future__ import annotations

import threading


class ReplicaStats:
    __slots__ = (
        "_lock",
        "requests",
        "in_flight",
        "prompt_tokens",
        "cached_tokens",
        "errors",
        "retried_away",
        "spilled",
        "trials",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0  # sends started on this replica
        self.in_flight = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.errors = 0  # sends that failed or answered a failing status
        self.retried_away = 0  # sends that failed before any byte and went to another replica
        self.spilled = 0  # requests it took although it was not the key's first choice (bounded load)
        self.trials = 0  # live requests let through as a half-open probe

    def started(self, *, spilled: bool = False, trial: bool = False) -> None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.spilled += spilled
            self.trials += trial

    def ended(
        self, *, error: bool = False, retried: bool = False, prompt_tokens: int = 0, cached_tokens: int = 0
    ) -> None:
        with self._lock:
            self.in_flight -= 1
            self.errors += error
            self.retried_away += retried
            self.prompt_tokens += max(0, prompt_tokens or 0)
            self.cached_tokens += max(0, cached_tokens or 0)

    def snapshot(self) -> dict:
        with self._lock:
            out = {
                "requests": self.requests,
                "in_flight": self.in_flight,
                "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens,
                "errors": self.errors,
                "retried_away": self.retried_away,
                "spilled": self.spilled,
                "trials": self.trials,
            }
        out["hit_rate"] = (
            round(out["cached_tokens"] / out["prompt_tokens"], 4) if out["prompt_tokens"] else None
        )
        return out
