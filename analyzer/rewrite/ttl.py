"""``safe`` for Anthropic: a one-hour cache where this tenant's prefix comes back slowly.

Anthropic keeps a cached prefix 5 minutes (each read renews it) unless a breakpoint asks
for ``"ttl": "1h"``. A head that returns after 6-59 minutes is rewritten at every return
with 5 minutes (1.25× the input price each time) but only read with 1 hour (0.1×), at the
cost of a dearer first write (2× instead of 1.25×). :class:`Reuse` is what the proxy saw
of one tenant's head (:mod:`proxy.reuse` keeps it); :func:`pays_for_1h` is the price
arithmetic: 1 h when the returns after more than 5 minutes would save more than the extra
write costs, ``slow_returns × (1.25 − 0.1) > writes × (2 − 1.25)``, with at least one
such return seen. :func:`apply_ttl` then marks the breakpoints on tools and system
(never those on messages) with ``"ttl": "1h"``, in cache order and only while every
breakpoint before it is 1 h, so Anthropic's rule that 1 h breakpoints precede 5 m ones
holds; an explicit ttl is never changed.

This module keeps no state and does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TTL_1H = "ttl-1h"
WRITE_5M, WRITE_1H, READ = 1.25, 2.0, 0.1


@dataclass(frozen=True, slots=True)
class Reuse:
    writes: int  # times the head came new or after more than an hour (a cache write either way)
    slow_returns: int  # returns after more than 5 minutes and within the hour


def pays_for_1h(reuse: Reuse | None) -> bool:
    if reuse is None or reuse.slow_returns < 1:
        return False
    return reuse.slow_returns * (WRITE_5M - READ) > max(1, reuse.writes) * (WRITE_1H - WRITE_5M)


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
