"""A bounded per-tenant memory of recent requests, for naming why a request missed the cache.

:meth:`DiagnosisMemory.observe` finds the tenant's closest earlier request (:meth:`_closest`),
asks :func:`analyzer.diagnose.diagnose`, then remembers the current one. Segment bytes are
interned by content hash; bounds: ``per_tenant`` requests, ``max_tenants`` tenants (least
recently seen evicted first), ``max_bytes`` of segment bytes (whole tenants evicted until it fits).

It lives in one process and is lost on restart; it never leaves the machine (no store, no
ledger). See docs/money.md (the miss reason).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

import xxhash

from analyzer.diagnose import Diagnosis, diagnose
from analyzer.divergence import common_prefix_len
from analyzer.segments import Seen, Segment


@dataclass(frozen=True, slots=True)
class _Entry:
    """One remembered request: a content hash per segment (``keys``) and per segment its
    (kind, path, cache_control, role) (``meta``); the bytes are the memory's, shared."""

    provider: str
    model: str
    ts: float
    keys: tuple[int, ...]
    meta: tuple[tuple[str, str, str | None, str | None], ...]


@dataclass(frozen=True, slots=True)
class Observation:
    """The diagnosis, the closest ``earlier`` request (None: none) and the ``common`` leading
    segments shared with it."""

    diagnosis: Diagnosis | None
    earlier: Seen | None
    common: int


class DiagnosisMemory:
    def __init__(
        self, per_tenant: int = 16, max_tenants: int = 10_000, max_bytes: int = 64 * 1024 * 1024
    ) -> None:
        if per_tenant < 1 or max_tenants < 1 or max_bytes < 1:
            raise ValueError("DiagnosisMemory bounds must be positive")
        self.per_tenant = per_tenant
        self.max_tenants = max_tenants
        self.max_bytes = max_bytes
        self._tenants: OrderedDict[str, deque[_Entry]] = OrderedDict()
        self._data: dict[int, bytes] = {}
        self._refs: dict[int, int] = {}
        self.bytes_held = 0

    def __len__(self) -> int:
        return sum(len(d) for d in self._tenants.values())

    # -- public -----------------------------------------------------------------------

    def observe(self, tenant: str, cur: Seen, *, cached_tokens: int = 0) -> Observation:
        keys = tuple(xxhash.xxh3_64_intdigest(s.data) for s in cur.segments)
        best, common = self._closest(tenant, cur, keys)
        earlier = self._seen(best) if best is not None else None
        found = diagnose(cur, earlier, cached_tokens=cached_tokens) if earlier is not None else None
        self._remember(tenant, cur, keys)
        return Observation(found, earlier, common)

    # -- internals --------------------------------------------------------------------

    def _closest(self, tenant: str, cur: Seen, keys: tuple[int, ...]) -> tuple[_Entry | None, int]:
        """The earlier request sharing the most leading segments; on a tie, the one whose
        next segment shares the longest byte prefix with ours (so a timestamp is compared
        with the previous timestamp, not with a request that had none); then the newest (they are
        read newest first, and a tie keeps the first). One sharing fewer segments than the best
        so far cannot win: its bytes are not compared."""
        entries = self._tenants.get(tenant)
        best: _Entry | None = None
        best_n, best_bytes = -1, -1
        provider, segments, data = cur.provider, cur.segments, self._data
        for entry in reversed(entries or ()):
            if entry.provider != provider:
                continue
            ekeys = entry.keys
            n = common_prefix_len(keys, ekeys)
            if n < best_n:
                continue
            common = (
                common_prefix_len(segments[n].data, data[ekeys[n]])
                if n < len(segments) and n < len(ekeys)
                else 0
            )
            if n > best_n or common > best_bytes:
                best, best_n, best_bytes = entry, n, common
        return best, max(best_n, 0)

    def _seen(self, entry: _Entry) -> Seen:
        segments = [
            Segment(kind, path, self._data[key], cache_control, role)
            for key, (kind, path, cache_control, role) in zip(entry.keys, entry.meta)
        ]
        return Seen(entry.provider, entry.model, entry.ts, segments)

    def _remember(self, tenant: str, cur: Seen, keys: tuple[int, ...]) -> None:
        """Keep ``cur`` as the tenant's newest, then evict to the bounds: the oldest tenants
        first, then, when one huge tenant alone is past ``max_bytes``, its oldest requests."""
        meta = tuple((s.kind, s.path, s.cache_control, s.role) for s in cur.segments)
        entry = _Entry(cur.provider, cur.model, cur.ts, keys, meta)
        for key, seg in zip(keys, cur.segments):
            self._ref(key, seg.data)
        entries = self._tenants.get(tenant)
        if entries is None:
            entries = self._tenants[tenant] = deque()
        self._tenants.move_to_end(tenant)
        entries.append(entry)
        while len(entries) > self.per_tenant:
            self._release(entries.popleft())
        while len(self._tenants) > self.max_tenants or (
            self.bytes_held > self.max_bytes and len(self._tenants) > 1
        ):
            _, evicted = self._tenants.popitem(last=False)
            for old in evicted:
                self._release(old)
        while self.bytes_held > self.max_bytes and len(entries) > 1:
            self._release(entries.popleft())

    def _ref(self, key: int, data: bytes) -> None:
        if key in self._refs:
            self._refs[key] += 1
            return
        self._refs[key] = 1
        self._data[key] = data
        self.bytes_held += len(data)

    def _release(self, entry: _Entry) -> None:
        for key in entry.keys:
            left = self._refs[key] - 1
            if left:
                self._refs[key] = left
            else:
                del self._refs[key]
                self.bytes_held -= len(self._data.pop(key))
