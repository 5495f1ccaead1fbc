"""Rendezvous (highest-random-weight) hashing: every replica's weight for a key, and the
replicas in descending weight, the order a request tries them in.

The weight depends only on the key and the replica's id (its base URL), so every proxy with
the same replica list agrees without talking to the others, and removing a replica moves
only the keys it ranked first. It knows nothing of health or load (see :mod:`.load_share`).
"""

from __future__ import annotations

from collections.abc import Iterable

import xxhash


def weight(key: bytes, replica: str) -> int:
    """A 64-bit pseudo-random weight of ``replica`` for ``key``; the same in every process."""
    return xxhash.xxh3_64_intdigest(key + b"\x00" + replica.encode("utf-8"))


def ranked(key: bytes, replicas: Iterable[str]) -> list[str]:
    """``replicas`` from the highest weight for ``key`` to the lowest (ties by id, for determinism)."""
    return sorted(replicas, key=lambda r: (-weight(key, r), r))


def home(key: bytes, replicas: Iterable[str]) -> str | None:
    """The replica ranked first for ``key`` (None when there is none)."""
    return min(replicas, key=lambda r: (-weight(key, r), r), default=None)
