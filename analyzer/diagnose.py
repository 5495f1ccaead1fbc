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
Where the requests fork and the reasons down to ``schema-changed`` come from the divergence
engine (:mod:`analyzer.divergence`); this module adds the model change and the reasons a
prefix that did repeat was not read. The caching rules (minimums, TTLs) live in
:mod:`analyzer.cache_rules`. This module is pure: it keeps no memory (see
``proxy.accounting.diagnosis``) and prices nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.cache_rules import OPENAI_STEP_TOKENS, min_cacheable_tokens, provider_ttl_s
from analyzer.divergence import fork, shared_segments
from analyzer.segments import ANTHROPIC, Seen
from analyzer.tokens import estimate_tokens


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


def diagnose(cur: Seen, prev: Seen | None, *, cached_tokens: int | None = 0) -> Diagnosis | None:
    """The miss reason for ``cur`` against ``prev`` (the tenant's closest earlier request).

    ``cached_tokens`` is what the provider reported reading from its cache; None before the
    response is known (then only causes visible in the request itself are named).
    """
    if prev is None or prev.provider != cur.provider:
        return None
    common = shared_segments(cur.segments, prev.segments)
    if cur.model != prev.model:  # with nothing shared: an unrelated request, not a miss
        return Diagnosis("model-changed", common, None, None, f"{prev.model} -> {cur.model}") if common else None
    found = fork(prev.segments, cur.segments, common)  # None: one is a prefix of the other
    if found is not None and found.reason is not None:
        return Diagnosis(found.reason, found.segment, found.path, found.offset)
    return _repeat_not_cached(cur, prev, common, cached_tokens) if common else None


REPEAT_REASONS = frozenset({"below-minimum", "no-cache-breakpoint", "ttl-expired", "not-cached"})


def settle(cur: Seen, prev: Seen | None, before: Diagnosis | None, cached_tokens: int) -> Diagnosis | None:
    """The final reason once the response's cached tokens are known, reusing ``before``
    (:func:`diagnose` with ``cached_tokens=None``) so nothing is classified twice."""
    if prev is None or prev.provider != cur.provider:
        return None
    if before is not None and before.reason not in REPEAT_REASONS:
        return before  # a divergence or a model change: the response does not change it
    common = shared_segments(cur.segments, prev.segments)
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
    ttl = provider_ttl_s(cur.provider, prev.segments, cur.model)
    if elapsed > ttl:
        return Diagnosis("ttl-expired", detail=f"{elapsed:.0f}s > {ttl:.0f}s")
    if cached_tokens is None or cached_tokens > 0:
        return None  # not known yet, or partly cached: the provider's own rounding or breakpoint placement
    return Diagnosis("not-cached")

