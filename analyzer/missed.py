"""Missed savings, defined once: which prompt tokens a request could have read from the cache.

:func:`reusable` gives the longest prefix shared with an earlier request, in whole segments
(equal byte for byte, or equal but for volatile values); :func:`missed_tokens` the part of it
the provider's rules cache, less what the provider reported read. For GPT-5.6+ the prefix is
cut back to a breakpoint (:func:`at_breakpoint`), with a :func:`tolerance` for the estimate.
The proxy's money layer and ``prefixgate analyze`` both call these; nothing else decides it.

It does NOT remember requests (the callers do), price tokens (:func:`analyzer.cost.missed_usd`)
or do I/O. See docs/money.md for the definition and the worked examples the tests pin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.cache_rules import OPENAI_56_RULES, OPENAI_STEP_TOKENS, CacheRules, cacheable_tokens, rules_for
from analyzer.divergence import common_prefix_len, shared_segments, volatile_span
from analyzer.segments import Segment
from analyzer.tokens import estimate_tokens

#: volatile values skipped in one request's prefix; past them the rest counts as different
MAX_VALUES = 32
#: bytes read each side of a difference to find the value there
SPAN_WINDOW = 256
#: exact-match rules (GPT-5.6+): the byte estimate's rounding, at least …
EXACT_TOLERANCE_TOKENS = 32
#: … or 1% of the prefix, whichever is more
EXACT_TOLERANCE_SHARE = 0.01
# Segments a GPT-5.6 breakpoint can end: a message or input item (a marked content part's), and Responses
# ``instructions``, which take no marker themselves but read the same when moved, unchanged, into a marked
# developer item (what ``--rewrite safe`` does, analyzer.rewrite.openai_breakpoints)
BREAKPOINT_KINDS = frozenset({"message", "instructions"})


@dataclass(frozen=True, slots=True)
class Reuse:
    """The prefix a request could have read from the cache."""

    #: leading segments: repeated, or repeated but for volatile values
    segments: int
    #: their size (canonical bytes, as the prefix chain counts them)
    bytes: int
    #: kinds of the values that changed inside it (empty: an exact repeat)
    volatile: tuple[str, ...] = ()


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
        if (
            len(kinds) >= budget or volatile_span(a, i) is None
        ):  # a narrow look first: most differences are prose
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


def exact_match(rules: CacheRules) -> bool:
    """The rules match a prefix exactly at a breakpoint (OpenAI GPT-5.6+), not in steps."""
    return rules is OPENAI_56_RULES


def tolerance(rules: CacheRules, could: int) -> int:
    """The smallest shortfall counted as a miss; one under it is the byte estimate's rounding:
    one 128-token step (OpenAI before 5.6 rounds to steps; Anthropic and the others as ever),
    and on exact-match rules 1% of the ``could`` tokens, at least 32."""
    if exact_match(rules):
        return max(EXACT_TOLERANCE_TOKENS, int(could * EXACT_TOLERANCE_SHARE))
    return OPENAI_STEP_TOKENS


def at_breakpoint(provider: str, model: str, segments: Sequence[Segment], reuse: Reuse) -> Reuse:
    """``reuse`` as the provider's rules can read it: unchanged, but on GPT-5.6+ cut back to its
    last segment that can end at a breakpoint (:data:`BREAKPOINT_KINDS`); empty when none does."""
    if not exact_match(rules_for(provider, model)):
        return reuse
    n = reuse.segments
    while n > 0 and segments[n - 1].kind not in BREAKPOINT_KINDS:
        n -= 1
    if n == reuse.segments:
        return reuse
    return Reuse(n, prefix_bytes(segments, n), reuse.volatile if n else ())


def missed_tokens(
    provider: str,
    model: str,
    reuse_bytes: int,
    cached_tokens: int,
    input_tokens: int | None = None,
    total_bytes: int | None = None,
) -> int:
    """Tokens of a ``reuse_bytes`` prefix the provider's rules would have served from its cache
    but did not (``cached_tokens`` reported); 0 for a shortfall within :func:`tolerance`. At
    most the prompt's uncached tokens when ``input_tokens`` is known. On GPT-5.6+ the prefix
    must end where a breakpoint can sit (:func:`at_breakpoint`), and with ``total_bytes`` (the
    whole prompt's canonical bytes) and ``input_tokens`` the byte estimate is scaled to the
    provider's own count (``input_tokens`` / the estimate of ``total_bytes``): an exact match
    leaves no step to hide a tokenizer's difference in."""
    rules = rules_for(provider, model)
    could = cacheable_tokens(rules, reuse_bytes)
    if exact_match(rules) and input_tokens and total_bytes:
        estimated = estimate_tokens(total_bytes)
        if estimated > 0:
            scaled = could * input_tokens // estimated
            could = scaled if scaled >= rules.min_tokens else 0
    if input_tokens is not None:
        could = min(could, input_tokens)
    shortfall = could - max(0, cached_tokens)
    return shortfall if shortfall >= tolerance(rules, could) else 0
