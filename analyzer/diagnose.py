"""Why a request missed the prompt cache: compare it with the tenant's closest earlier request.

Given the current request and the earlier one that shares the longest prefix with it, this
names the first segment that differs (its path and the byte offset inside its canonical
JSON) and classifies the cause, most specific first:

==========================  =============================================================
``model-changed``           same leading segments, different model (caches never cross)
``tool-order``              the same tools, in a different order
``json-key-order``          a segment equal as JSON but with keys in another order
``tools-changed``           a tool definition differs
``volatile-<kind>``         the first difference sits inside a volatile value found by
                            :func:`analyzer.detect.find_volatile` (``volatile-time``,
                            ``volatile-date``, ``volatile-uuid``, ``volatile-request-id`` …)
``system-changed``          the system prompt / instructions differ
``schema-changed``          the structured-output schema differs
``ttl-expired``             the prefix repeated, but after the provider's cache TTL
``below-minimum``           the repeated prefix is shorter than the provider caches
``no-cache-breakpoint``     Anthropic: the repeated prefix carries no ``cache_control``
``not-cached``              the prefix repeated in time and above the minimum, and the
                            provider still reported no cache read for it
==========================  =============================================================

A difference in an ordinary message (a new question) is not a miss: the result is None.
The caching rules (minimums, TTLs) live in :mod:`analyzer.cache_rules`. This module is
pure: it keeps no memory (see ``proxy.accounting.diagnosis``) and prices nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import orjson

from analyzer.cache_rules import OPENAI_STEP_TOKENS, min_cacheable_tokens, provider_ttl_s
from analyzer.segments import ANTHROPIC, Segment
from analyzer.tokens import estimate_tokens

@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the diagnosis sees it."""

    provider: str
    model: str
    ts: float
    segments: Sequence[Segment]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    reason: str
    segment: int | None = None  # index of the first differing segment
    path: str | None = None  # its field path in the body
    offset: int | None = None  # byte offset of the first difference in its canonical JSON
    detail: str = ""

    def header(self) -> str:
        """``reason; path=…; offset=…`` for the ``x-prefixgate-miss-reason`` header."""
        parts = [self.reason]
        if self.path is not None:
            parts.append(f"path={self.path}")
        if self.offset is not None:
            parts.append(f"offset={self.offset}")
        return "; ".join(parts)


def body_of(segment: Segment) -> bytes:
    """The canonical JSON of a segment, without its kind/role tag."""
    head, sep, rest = segment.data.partition(b"\x1f")
    return rest if sep else segment.data


def common_segments(a: Sequence[Segment], b: Sequence[Segment]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x.data != y.data:
            break
        n += 1
    return n


def first_byte_difference(a: bytes, b: bytes) -> int:
    """Index of the first differing byte (binary search over slice compares: memcmp speed)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _same_json(a: bytes, b: bytes) -> bool:
    try:
        return orjson.loads(a) == orjson.loads(b)  # dict equality ignores key order
    except orjson.JSONDecodeError:
        return False


def _tools(segments: Sequence[Segment]) -> list[bytes]:
    return [s.data for s in segments if s.kind == "tool"]


def _volatile_kind(text_bytes: bytes, offset: int, window: int = 64) -> str | None:
    """The kind of volatile value covering byte ``offset``, looking only near it."""
    from analyzer.detect import find_volatile  # imported late: detection is the heavy part

    lo = max(0, offset - window)
    text = text_bytes[lo : offset + window].decode("utf-8", "ignore")
    char_offset = len(text_bytes[lo:offset].decode("utf-8", "ignore"))
    for found in find_volatile(text):
        if found.start <= char_offset < max(found.end, found.start + 1):
            return found.kind
    return None


def classify_divergence(cur: Seen, prev: Seen, index: int) -> Diagnosis | None:
    """Why segment ``index`` (the first that differs) breaks the shared prefix."""
    a, b = cur.segments[index], prev.segments[index]
    body_a, body_b = body_of(a), body_of(b)
    offset = first_byte_difference(body_a, body_b)

    def found(reason: str, detail: str = "") -> Diagnosis:
        return Diagnosis(reason, index, a.path, offset, detail)

    if a.kind == "tool" and b.kind == "tool":
        tools_a, tools_b = _tools(cur.segments), _tools(prev.segments)
        if sorted(tools_a) == sorted(tools_b):
            return found("tool-order")
    if a.kind == b.kind and len(body_a) == len(body_b) and _same_json(body_a, body_b):
        return found("json-key-order")  # reordering keys keeps the length: a cheap first test
    if a.kind == "tool" or b.kind == "tool":
        return found("tools-changed")
    if a.kind == "message" and index == len(cur.segments) - 1:
        return None  # the request's own new turn: new content, not a cache miss
    if a.kind == b.kind:
        kind = _volatile_kind(body_a, offset)
        if kind is None:
            kind = _volatile_kind(body_b, offset)
        if kind is not None:
            return found(f"volatile-{kind}")
    if a.kind in ("system", "instructions") or a.role in ("system", "developer"):
        return found("system-changed")
    if a.kind == "schema":
        return found("schema-changed")
    return None  # a different message: new content, not a cache miss


def diagnose(cur: Seen, prev: Seen | None, *, cached_tokens: int | None = 0) -> Diagnosis | None:
    """The miss reason for ``cur`` against ``prev`` (the tenant's closest earlier request).

    ``cached_tokens`` is what the provider reported reading from its cache; None before the
    response is known (then only causes visible in the request itself are named).
    """
    if prev is None or prev.provider != cur.provider:
        return None
    common = common_segments(cur.segments, prev.segments)
    if common == 0:
        if cur.model != prev.model:
            return None  # nothing shared: an unrelated request, not a miss
        if cur.segments and prev.segments:
            return classify_divergence(cur, prev, 0)
        return None
    if cur.model != prev.model:
        return Diagnosis("model-changed", common, None, None, f"{prev.model} -> {cur.model}")
    if common < min(len(cur.segments), len(prev.segments)):
        found = classify_divergence(cur, prev, common)
        if found is not None:
            return found
    return _repeat_not_cached(cur, prev, common, cached_tokens)


REPEAT_REASONS = frozenset({"below-minimum", "no-cache-breakpoint", "ttl-expired", "not-cached"})


def settle(cur: Seen, prev: Seen | None, before: Diagnosis | None, cached_tokens: int) -> Diagnosis | None:
    """The final reason once the response's cached tokens are known, reusing ``before``
    (:func:`diagnose` with ``cached_tokens=None``) so nothing is classified twice."""
    if prev is None or prev.provider != cur.provider:
        return None
    if before is not None and before.reason not in REPEAT_REASONS:
        return before  # a divergence or a model change: the response does not change it
    common = common_segments(cur.segments, prev.segments)
    if common == 0 or cur.model != prev.model:
        return None
    return _repeat_not_cached(cur, prev, common, cached_tokens)


def _repeat_not_cached(cur: Seen, prev: Seen, common: int, cached_tokens: int | None) -> Diagnosis | None:
    """The first ``common`` segments repeated: say why the provider did not read them."""
    repeated = estimate_tokens(sum(len(s.data) for s in cur.segments[:common]))
    if cached_tokens is not None and cached_tokens > 0 and cached_tokens + OPENAI_STEP_TOKENS >= repeated:
        return None  # cached (up to the provider's rounding)
    minimum = min_cacheable_tokens(cur.provider, cur.model)
    if repeated < minimum:
        return Diagnosis("below-minimum", detail=f"{repeated} < {minimum} tokens")
    if cur.provider == ANTHROPIC and not any(s.cache_control for s in cur.segments[:common]):
        return Diagnosis("no-cache-breakpoint")
    elapsed = cur.ts - prev.ts
    ttl = provider_ttl_s(cur.provider, prev.segments)
    if elapsed > ttl:
        return Diagnosis("ttl-expired", detail=f"{elapsed:.0f}s > {ttl:.0f}s")
    if cached_tokens is None or cached_tokens > 0:
        return None  # not known yet, or partly cached: the provider's own rounding or breakpoint placement
    return Diagnosis("not-cached")

