"""Money from usage: what a request cost, what caching saved, what it could have saved.

**cost** prices input, cached reads, writes per TTL and output (``Cost.parts``); **uncached**
is every prompt token at ``input``; **saved** = uncached − cost (negative kept); **missed**
prices the tokens :mod:`analyzer.missed` names at what was paid less the read rate.
Money is exact or null: an unpriced model, flagged usage, rules drift (:func:`rules_drift`) or
writes at an unpublished TTL rate give ``None``, never 0. :func:`format_usd` formats it.

It does NOT decide which tokens were missed (:mod:`analyzer.missed`) or price a Chat request
whose 12 h split is unknown (:func:`ttl_split_unknown`: the caller's). See docs/money.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from analyzer.pricing import Price
from analyzer.segments import Segment
from analyzer.usage import Usage

PER = 1_000_000


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Cost split by token kind (for the dashboard's stacked chart)."""

    input_usd: float
    cache_read_usd: float
    cache_write_usd: float
    output_usd: float

    @property
    def total(self) -> float:
        return self.input_usd + self.cache_read_usd + self.cache_write_usd + self.output_usd


@dataclass(frozen=True, slots=True)
class Cost:
    cost_usd: float | None
    uncached_usd: float | None
    saved_usd: float | None
    #: cost_usd split by token kind; None when unpriced
    parts: Breakdown | None = None

    @property
    def priced(self) -> bool:
        return self.cost_usd is not None


UNPRICED = Cost(None, None, None)


def breakdown(usage: Usage, price: Price) -> Breakdown:
    write_12h = usage.cache_write_12h_tokens * (price.write_12h_rate or 0.0)
    return Breakdown(
        input_usd=usage.uncached_input_tokens * price.input / PER,
        cache_read_usd=usage.cached_tokens * price.read_rate / PER,
        cache_write_usd=(
            usage.cache_write_short_tokens * price.short_write_rate
            + usage.cache_write_1h_tokens * price.write_1h_rate
            + write_12h
        )
        / PER,
        output_usd=usage.output_tokens * price.output / PER,
    )


WRITES_NOT_BILLED = "cache_write_tokens:not_billed_by_price_row"


def rules_drift(usage: Usage | None, price: Price | None) -> tuple[str, ...]:
    """What in ``usage`` the model's rules do not expect (the one check, for the proxy's money
    layer and for ``analyze``): the parser's notes (:mod:`analyzer.usage` "Drift"), and cache
    writes on a model whose price row bills none (:data:`WRITES_NOT_BILLED`: an OpenAI model
    before 5.6 reporting writes means the rules or the price file are stale)."""
    if usage is None:
        return ()
    if (
        price is not None
        and usage.cache_write_tokens
        and not price.bills_writes
        and WRITES_NOT_BILLED not in usage.drift
    ):
        return (*usage.drift, WRITES_NOT_BILLED)  # (already there when the usage was read back from a ledger)
    return usage.drift


TTL_SPLIT_UNKNOWN = "cache_write_tokens:ttl_split_unknown"


def ttl_split_unknown(usage: Usage | None, segments: Sequence[Segment], chat: bool) -> bool:
    """The writes of ``usage`` cannot be priced by TTL: Chat Completions (``chat``) reports
    GPT-5.6 writes as one number, with no TTL split (Responses has one), so when the request
    marked a ``ttl: "12h"`` breakpoint (a segment's ``cache_control``) and the usage reports
    writes, how many were 12-hour ones is unknown. Not drift (the rules expect this usage);
    the caller prices such a request null and flags it (:data:`TTL_SPLIT_UNKNOWN`)."""
    if not chat or usage is None or not usage.cache_write_tokens or usage.cache_write_12h_tokens:
        return False
    return any(s.cache_control == "12h" for s in segments)


def priceable(usage: Usage, price: Price) -> bool:
    """Every token of ``usage`` has a rate in ``price`` and its numbers are as reported."""
    if usage.flags or rules_drift(usage, price):
        return False
    if usage.cache_write_1h_tokens and price.cache_write_1h is None:
        return False  # a row pricing 5-minute writes only: an hour's rate is not the input rate
    if usage.cache_write_short_tokens and price.cache_write_30m is None and price.cache_write_5m is None:
        return False  # a row pricing the long TTL only
    return not (usage.cache_write_12h_tokens and price.write_12h_rate is None)


def cost_of(usage: Usage | None, price: Price | None) -> Cost:
    if usage is None or price is None or not priceable(usage, price):
        return UNPRICED
    parts = breakdown(usage, price)
    actual = parts.total
    uncached = (usage.input_tokens * price.input + usage.output_tokens * price.output) / PER
    saved = uncached - actual
    if abs(saved) < 1e-12:  # the same sum in another order: float noise, not money
        saved = 0.0
    return Cost(cost_usd=actual, uncached_usd=uncached, saved_usd=saved, parts=parts)


def missed_usd(tokens: int, price: Price | None, usage: Usage | None = None) -> float | None:
    """What reading ``tokens`` from the cache would have saved over what the request paid for
    them; None when unpriced.

    The missed tokens follow the cached ones in the prompt, so with ``usage`` the first of
    them are the request's cache writes (the long-TTL ones first: Anthropic requires longer
    TTLs before shorter ones), billed with the write premium, and the rest plain input::

        (wlong × (write_long − read) + wshort × (write_short − read) + plain × (input − read)) / 1M

    Without ``usage`` (a log line without a usage block) every token counts as plain input.
    """
    if price is None:
        return None
    t = max(0, tokens)
    w1h = min(t, usage.cache_write_1h_tokens) if usage is not None else 0
    w12h = (
        min(t - w1h, usage.cache_write_12h_tokens)
        if usage is not None and price.write_12h_rate is not None
        else 0
    )
    short = min(t - w1h - w12h, usage.cache_write_short_tokens) if usage is not None else 0
    plain = t - w1h - w12h - short
    read = price.read_rate
    long_usd = w1h * (price.write_1h_rate - read) + w12h * ((price.write_12h_rate or 0.0) - read)
    return (long_usd + short * (price.short_write_rate - read) + plain * (price.input - read)) / PER


def _fixed(a: float, digits: int) -> str:
    """``a`` to ``digits`` decimals from its exact binary value, halves up (JavaScript's
    ``toFixed``, which the dashboard uses, rounds the same way), with thousands commas."""
    return format(Decimal(a).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP), ",f")


def format_usd(value: float | None) -> str:
    """Money as every prefixgate surface prints it (the dashboard's ``usd()`` mirrors it): cents
    from a cent up (``$1,234.57``, ``$0.04``), 4 significant digits below a cent
    (``$0.007138``, ``$0.0001536``), ``$0.00`` for nothing and ``—`` for unknown (null, never
    $0). Negative amounts (a cache write costing more than it saved) keep their sign."""
    if value is None:
        return "—"
    a = abs(value)
    text = _fixed(a, 2)
    if 0 < a < 0.01:
        digits = 3 - math.floor(math.log10(a))  # decimals that give 4 significant digits
        small = _fixed(a, digits)
        if Decimal(small) < Decimal("0.01"):  # else it rounds up to a cent: shown in cents
            text = small
    return ("-$" if value < 0 and text.strip("0.,") else "$") + text
