"""Chained hashes over request segments: ``h[i] = xxh3_128(h[i-1] || segment_i)``.

``h[i]`` names the exact prefix of segments ``0..i``: two requests share it iff (up to 2⁻¹²⁸
collisions) those segments are byte-identical, so the longest entry seen before is the repeated
prefix (vLLM's block hashes, over segments). The root ``h[-1]`` hashes provider and model: a
cache never crosses models.

It does NOT store anything (``proxy.store``) or compare chains (:mod:`analyzer.divergence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import xxhash

from analyzer.segments import Segment
from analyzer.tokens import estimate_tokens


def root_hash(provider: str, model: str) -> bytes:
    return xxhash.xxh3_128_digest(f"{provider}\x00{model}".encode("utf-8", "replace"))


@dataclass(frozen=True, slots=True)
class Chain:
    """Hashes and cumulative sizes of a request's prefixes, one entry per segment."""

    #: 16-byte digests; hashes[i] covers segments 0..i
    hashes: tuple[bytes, ...]
    #: ends[i]: bytes in segments 0..i
    ends: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.hashes)

    def bytes_at(self, n_segments: int) -> int:
        """Bytes in the first ``n_segments`` segments."""
        return self.ends[n_segments - 1] if n_segments > 0 else 0

    def tokens_at(self, n_segments: int) -> int:
        return estimate_tokens(self.bytes_at(n_segments))

    @property
    def hex(self) -> list[str]:
        return [h.hex() for h in self.hashes]


def chain(segments: Sequence[Segment], root: bytes = b"") -> Chain:
    hashes: list[bytes] = []
    ends: list[int] = []
    prev, total = root, 0
    for seg in segments:
        prev = xxhash.xxh3_128_digest(prev + seg.data)
        total += len(seg.data)
        hashes.append(prev)
        ends.append(total)
    return Chain(tuple(hashes), tuple(ends))
