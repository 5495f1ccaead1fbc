"""Why a request missed the prompt cache: compare it with the tenant's closest earlier request.

Names the first segment that differs (path and byte offset in its canonical JSON) and a
reason, most specific first (``model-changed``, ``tool-order`` … ``not-cached``): where the
requests fork comes from :mod:`analyzer.divergence`; this module adds the model change and why
a prefix that did repeat was not read (TTL, minimum, breakpoints, per :mod:`analyzer.cache_rules`).
A difference in an ordinary message (a new question) is not a miss: the result is None.

It does NOT keep memory (see ``proxy.accounting.diagnosis``) or price anything.
See docs/money.md for every reason and the GPT-5.6 breakpoint rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.cache_rules import min_cacheable_tokens, provider_ttl_s, rules_for
from analyzer.cache_rules import openai as openai_rules
from analyzer.divergence import fork, shared_segments
from analyzer.missed import BREAKPOINT_KINDS, exact_match, tolerance
from analyzer.segments import ANTHROPIC, Seen
from analyzer.tokens import estimate_tokens


@dataclass(frozen=True, slots=True)
class Diagnosis:
    reason: str
    #: index of the first differing segment
    segment: int | None = None
    #: its field path in the body
    path: str | None = None
    #: byte offset of the first difference in its canonical JSON
    offset: int | None = None
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
        return (
            Diagnosis("model-changed", common, None, None, f"{prev.model} -> {cur.model}") if common else None
        )
    found = fork(prev.segments, cur.segments, common)  # None: one is a prefix of the other
    if found is not None and found.reason is not None:
        return Diagnosis(found.reason, found.segment, found.path, found.offset)
    return _repeat_not_cached(cur, prev, common, cached_tokens) if common else None


REPEAT_REASONS = frozenset(
    {
        "below-minimum",
        "no-cache-breakpoint",
        "no-breakpoint-at-head",
        "breakpoint-not-written",
        "ttl-expired",
        "not-cached",
    }
)


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
    rules = rules_for(cur.provider, cur.model)
    if (
        cached_tokens is not None
        and cached_tokens > 0
        and cached_tokens + tolerance(rules, repeated) >= repeated
    ):
        return None  # cached (up to the provider's rounding)
    minimum = min_cacheable_tokens(cur.provider, cur.model)
    if repeated < minimum:
        return Diagnosis("below-minimum", detail=f"{repeated} < {minimum} tokens")
    if cur.provider == ANTHROPIC and not any(s.cache_control for s in cur.segments[:common]):
        return Diagnosis("no-cache-breakpoint")
    if exact_match(rules):
        found = _head_breakpoint(cur, prev, common, rules)
        if found is not None:
            return found
    elapsed = cur.ts - prev.ts
    ttl = provider_ttl_s(cur.provider, prev.segments, cur.model)
    if elapsed > ttl:
        return Diagnosis("ttl-expired", detail=f"{elapsed:.0f}s > {ttl:.0f}s")
    if cached_tokens is None or cached_tokens > 0:
        return None  # not known yet, or partly cached: the provider's own rounding or breakpoint placement
    return Diagnosis("not-cached")


def _tokens(seen: Seen, n: int) -> int:
    return estimate_tokens(sum(len(s.data) for s in seen.segments[:n]))


def _head_breakpoint(cur: Seen, prev: Seen, common: int, rules) -> Diagnosis | None:
    """GPT-5.6+: the repeated stable head ends at no breakpoint ``prev`` wrote (None: one covers it).

    The head is the leading run of tools, schemas and system/developer messages inside the
    repeated prefix, up to its last message or instructions (where a breakpoint can sit,
    :data:`analyzer.missed.BREAKPOINT_KINDS`); it counts from the
    provider's minimum. ``prev`` wrote its latest explicit markers and its implicit breakpoint
    at its last message; one of them inside the repeated prefix, at or past the head's end (up
    to the estimate's rounding), could have been read."""
    segs = cur.segments
    run = 0
    while run < common and segs[run].in_head:
        run += 1
    head = max((i + 1 for i in range(run) if segs[i].kind in BREAKPOINT_KINDS), default=0)
    head_tokens = _tokens(cur, head)
    if head == 0 or head_tokens < rules.min_tokens:
        return None
    marks = [i + 1 for i, s in enumerate(prev.segments) if s.cache_control]
    written = set(marks[-openai_rules.MAX_WRITES :]) | {len(prev.segments)}
    readable = [p for p in written if p <= common and _tokens(prev, p) >= rules.min_tokens]
    best = _tokens(prev, max(readable, default=0))
    if head_tokens - best < tolerance(rules, head_tokens):
        return None  # a breakpoint at (or past) the head's end: it could be read
    where = segs[head - 1].path
    unwritten = [p for p in marks if p <= head and p not in written and _tokens(prev, p) > best]
    if unwritten:
        at = prev.segments[unwritten[-1] - 1].path
        return Diagnosis(
            "breakpoint-not-written",
            unwritten[-1] - 1,
            at,
            detail=f"{len(marks)} breakpoints marked; only the latest {openai_rules.MAX_WRITES} are written",
        )
    implicit = prev.segments[-1].path
    return Diagnosis(
        "no-breakpoint-at-head",
        head - 1,
        where,
        detail=f"head of {head_tokens} tokens ends at {where} with no breakpoint; the implicit one is at {implicit}",
    )
