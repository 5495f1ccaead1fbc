"""``safe``: a longer cache where a tenant's prefix comes back slowly (Anthropic 1 h, GPT-5.6+ 12 h).

Anthropic keeps a cached prefix 5 minutes (each read renews it) unless a breakpoint asks
for ``"ttl": "1h"``. A head that returns after 6-59 minutes is rewritten at every return
with 5 minutes (1.25× the input price each time) but only read with 1 hour (0.1×), at the
cost of a dearer first write (2× instead of 1.25×). :class:`HeadReturns` is what the proxy saw
of one tenant's head (:class:`proxy.head_returns.HeadReturnsTracker` keeps it); :func:`pays_for_1h` is the price
arithmetic: 1 h when the returns after more than 5 minutes would save more than the extra
write costs, ``slow_returns × (1.25 − 0.1) > writes × (2 − 1.25)``, with at least one
such return seen. :func:`apply_ttl` then marks the breakpoints on tools and system
(never those on messages) with ``"ttl": "1h"``, in cache order and only while every
breakpoint before it is 1 h, so Anthropic's rule that 1 h breakpoints precede 5 m ones
holds; an explicit ttl is never changed.

OpenAI GPT-5.6 and later (:mod:`analyzer.cache_rules.openai`) keep a breakpoint at least 30
minutes, or 12 hours with ``"ttl": "12h"``. The same arithmetic with their multipliers:
:func:`pays_for_12h` says 12 h when ``slow_returns × (1.25 − 0.1) > writes × (w12 − 1.25)``,
``slow_returns`` counting returns after more than 30 minutes and within 12 hours,
``writes`` the head's first sightings and returns after more than 12 hours, and ``w12`` the
price row's 12-hour write rate over its input rate (:func:`write_12h_ratio`). Only where that
rate is published: a row whose ``cache_write_12h`` is null (GPT-5.6 itself, today) never gets
12 h, since a request that wrote with it could not be priced; for the same reason nor does
Chat Completions, whose usage does not split writes by TTL. The marker itself is set by
:mod:`.openai_breakpoints` (only on the head marker it adds; a client's are never touched).

This module keeps no state and does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.cache_rules import openai as openai_rules

if TYPE_CHECKING:
    from analyzer.pricing import Price

TTL_1H = "ttl-1h"
WRITE_5M, WRITE_1H, READ = 1.25, 2.0, 0.1
WRITE_30M, READ_56 = openai_rules.WRITE_MULTIPLIER, openai_rules.READ_MULTIPLIER  # GPT-5.6+: 1.25×, 0.1×


@dataclass(frozen=True, slots=True)
class HeadReturns:
    writes: int  # times the head came new or after the long TTL (1 h; 12 h for GPT-5.6+): a cache write either way
    slow_returns: int  # returns after the short TTL (5 min; 30 min for GPT-5.6+) and within the long one


def pays_for_1h(returns: HeadReturns | None) -> bool:
    if returns is None or returns.slow_returns < 1:
        return False
    return returns.slow_returns * (WRITE_5M - READ) > max(1, returns.writes) * (WRITE_1H - WRITE_5M)


def write_12h_ratio(price: Price | None) -> float | None:
    """A row's 12-hour write rate over its input rate; None where it is not published."""
    if price is None or price.cache_write_12h is None or not price.input or price.input <= 0:
        return None
    return price.cache_write_12h / price.input


def pays_for_12h(returns: HeadReturns | None, write_12h: float | None) -> bool:
    """True when 12-hour breakpoints on a GPT-5.6+ head save more than their dearer writes cost
    (``returns`` counted with 30-minute and 12-hour windows; ``write_12h``: the 12-hour write
    price over input, None when unpriced: never)."""
    if returns is None or write_12h is None or returns.slow_returns < 1:
        return False
    return returns.slow_returns * (WRITE_30M - READ_56) > max(1, returns.writes) * (write_12h - WRITE_30M)


def _marked(block: Any) -> bool:
    return isinstance(block, dict) and isinstance(block.get("cache_control"), dict)


def apply_ttl(body: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """Head breakpoints (tools, then system) without a ttl get ``"1h"``, while cache order allows."""
    new = dict(body)
    changed = False
    for field in ("tools", "system"):
        blocks = body.get(field)
        if not isinstance(blocks, list):
            continue
        out = list(blocks)
        for i, block in enumerate(blocks):
            if not _marked(block):
                continue
            ttl = block["cache_control"].get("ttl")
            if ttl == "1h":
                continue
            if ttl is not None:  # an explicit 5m: nothing after it may be 1h
                if changed:
                    new[field] = out
                return (new, [TTL_1H]) if changed else (None, [])
            out[i] = {**block, "cache_control": {**block["cache_control"], "ttl": "1h"}}
            changed = True
        new[field] = out
    return (new, [TTL_1H]) if changed else (None, [])
