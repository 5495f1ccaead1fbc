"""``safe``: a longer cache where a tenant's prefix comes back slowly (Anthropic 1 h, GPT-5.6+ 12 h).

:class:`HeadReturns` is what the proxy saw of one tenant's head; :func:`pays_for_1h` and
:func:`pays_for_12h` are the price arithmetic (slow returns' savings against the dearer write;
12 h only where the row publishes a 12-hour write rate, :func:`write_12h_ratio`);
:func:`apply_ttl` marks Anthropic's tool/system breakpoints 1 h in cache order.

It does NOT keep state, do I/O, change an explicit ``ttl`` or set OpenAI markers (that is
:mod:`.openai_breakpoints`). See docs/rewrite.md ("A longer TTL where it pays").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.cache_rules import openai as openai_rules

if TYPE_CHECKING:
    from analyzer.pricing import Price

TTL_1H = "ttl-1h"
WRITE_5M, WRITE_1H, READ = 1.25, 2.0, 0.1
#: GPT-5.6+: 1.25×, 0.1×
WRITE_30M, READ_56 = openai_rules.WRITE_MULTIPLIER, openai_rules.READ_MULTIPLIER


@dataclass(frozen=True, slots=True)
class HeadReturns:
    #: times the head came new or after the long TTL (1 h; 12 h for GPT-5.6+): a cache write either way
    writes: int
    #: returns after the short TTL (5 min; 30 min for GPT-5.6+) and within the long one
    slow_returns: int


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
