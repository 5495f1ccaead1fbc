"""Missed savings, defined once: which prompt tokens a request could have read from the cache.

The proxy's money layer (``proxy.accounting.money``, whose figure the ledger, stats,
metrics, the summary, the dashboard and ``report`` all sum) and ``prefixgate analyze``
(:mod:`analyzer.logs.analysis`) call these two functions and nothing else decides it:

1. :func:`reusable` — the longest prefix this request shares with an earlier one (within
   the provider's TTL: the callers check the time), in whole segments: the segments that
   repeated byte for byte, then those that are equal *but for volatile values* — the
   classic miss, a timestamp in the system prompt, is the same prompt with another time,
   and every token after the time would have been cached had it not changed. A segment
   that differs anywhere else (a new question, an edited instruction) ends the prefix.
2. :func:`missed_tokens` — the part of that prefix the provider's rules cache (its minimum,
   OpenAI's 128-token steps: :mod:`analyzer.cache_rules`), less the cached tokens the
   provider reported; a shortfall under one 128-token step is the rounding of the
   byte-based token estimate (:mod:`analyzer.tokens`), not a miss.

The tokens are priced by :func:`analyzer.cost.missed_usd`: what the request paid for them
(plain input, or a cache write with its premium) less the cached-read rate.

Worked example (``tests/analyzer/test_missed.py`` pins it, and one for Anthropic with the
write premium, to 1e-9): a ``gpt-4o-mini`` request whose system prompt starts
``Current time: …`` forks from the previous one at the time, the rest of the system prompt
equal, the question new. The system segment is 7,206 bytes, ≈ 1,802 tokens, of which
OpenAI's rules cache 1,024 + 6 × 128 = 1,792; the provider reported 0 cached, so 1,792
tokens were missed, at $0.15 − $0.075 per 1M: $0.0001344.

Pure: no memory of requests (the callers keep it), no prices, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.cache_rules import OPENAI_STEP_TOKENS, cacheable_tokens, rules_for
from analyzer.divergence import common_prefix_len, shared_segments, volatile_span
from analyzer.segments import Segment

MAX_VALUES = 32  # volatile values skipped in one request's prefix; past them the rest counts as different
SPAN_WINDOW = 256  # bytes read each side of a difference to find the value there


@dataclass(frozen=True, slots=True)
class Reuse:
    """The prefix a request could have read from the cache."""

    segments: int  # leading segments: repeated, or repeated but for volatile values
    bytes: int  # their size (canonical bytes, as the prefix chain counts them)
    volatile: tuple[str, ...] = ()  # kinds of the values that changed inside it (empty: an exact repeat)


def prefix_bytes(segments: Sequence[Segment], n: int) -> int:
    return sum(len(s.data) for s in segments[:n])


def same_but_volatile(a: bytes, b: bytes, budget: int = MAX_VALUES) -> tuple[str, ...] | None:
    """The kinds of the volatile values that alone tell ``a`` from ``b`` (empty when equal);
    None when they differ anywhere else or in more than ``budget`` values. Each difference
    must sit inside a volatile value of the same kind, starting at the same place, in both;
    the comparison goes on after them."""
    i = j = 0
    kinds: list[str] = []
    while True:
        n = common_prefix_len(a[i:], b[j:])
        i, j = i + n, j + n
        if i == len(a) and j == len(b):
            return tuple(kinds)
        if len(kinds) >= budget or volatile_span(a, i) is None:  # a narrow look first: most differences are prose
            return None
        va, vb = volatile_span(a, i, SPAN_WINDOW), volatile_span(b, j, SPAN_WINDOW)
        if va is None or vb is None or va[0] != vb[0] or i - va[1] != j - vb[1] or va[2] <= i or vb[2] <= j:
            return None
        kinds.append(va[0])
        i, j = va[2], vb[2]


def reusable(cur: Sequence[Segment], earlier: Sequence[Segment], repeated: int | None = None) -> Reuse:
    """The leading segments of ``cur`` equal to ``earlier``'s, or equal but for volatile values.
    ``repeated``: the segments known to repeat exactly (computed when None)."""
    n = shared_segments(cur, earlier) if repeated is None else repeated
    kinds: list[str] = []
    while n < len(cur) and n < len(earlier):
        a, b = cur[n], earlier[n]
        if a.data != b.data:
            found = same_but_volatile(a.data, b.data, MAX_VALUES - len(kinds)) if a.kind == b.kind else None
            if not found:
                break
            kinds.extend(found)
        n += 1
    return Reuse(n, prefix_bytes(cur, n), tuple(kinds))


def longest(*candidates: Reuse | None) -> Reuse:
    """The longest of several prefixes (an exact repeat the store knew, one found against the
    closest earlier request …); an empty one when none is given."""
    best = Reuse(0, 0)
    for r in candidates:
        if r is not None and r.bytes > best.bytes:
            best = r
    return best


def missed_tokens(provider: str, model: str, reuse_bytes: int, cached_tokens: int, input_tokens: int | None = None) -> int:
    """Tokens of a ``reuse_bytes`` prefix the provider's rules would have served from its cache
    but did not (``cached_tokens`` reported); 0 for a shortfall under one 128-token step. At
    most the prompt's uncached tokens when ``input_tokens`` is known."""
    could = cacheable_tokens(rules_for(provider, model), reuse_bytes)
    if input_tokens is not None:
        could = min(could, input_tokens)
    shortfall = could - max(0, cached_tokens)
    return shortfall if shortfall >= OPENAI_STEP_TOKENS else 0
