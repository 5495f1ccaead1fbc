"""Money from usage: what a request cost, what caching saved, what it could have saved.

- **cost**: plain input tokens at ``input``, cached reads at ``cache_read``, cache writes at
  ``cache_write_5m`` / ``cache_write_1h``, output at ``output`` (USD per 1M tokens); the
  four parts come with it (``Cost.parts``, a :class:`Breakdown`), computed once.
- **uncached**: the same tokens as if no cache existed: every prompt token at ``input``.
- **saved** = uncached − cost. It is negative when a request only wrote to the cache
  (Anthropic bills writes at 1.25× or 2× input); the sign is kept, never clamped.
- **missed**: tokens of a prefix seen repeating within the provider's TTL that the provider
  did not report as cached, priced at (``input`` − ``cache_read``): what a read would
  have saved over paying full input for them.

A model without a price gives ``None`` everywhere (never 0): the caller counts it as
unpriced. So does a usage with ``flags`` (a number :mod:`analyzer.usage` had to clamp or
zero): its cost is not known exactly, and money is exact or null. This module does not
decide *which* tokens were missed (see ``proxy.accounting.money``); it only prices them.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.pricing import Price
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
    parts: Breakdown | None = None  # cost_usd split by token kind; None when unpriced

    @property
    def priced(self) -> bool:
        return self.cost_usd is not None


UNPRICED = Cost(None, None, None)


def breakdown(usage: Usage, price: Price) -> Breakdown:
    return Breakdown(
        input_usd=usage.uncached_input_tokens * price.input / PER,
        cache_read_usd=usage.cached_tokens * price.read_rate / PER,
        cache_write_usd=(usage.cache_write_5m_tokens * price.write_5m_rate + usage.cache_write_1h_tokens * price.write_1h_rate) / PER,
        output_usd=usage.output_tokens * price.output / PER,
    )


def cost_of(usage: Usage | None, price: Price | None) -> Cost:
    if usage is None or price is None or usage.flags:
        return UNPRICED
    parts = breakdown(usage, price)
    actual = parts.total
    uncached = (usage.input_tokens * price.input + usage.output_tokens * price.output) / PER
    return Cost(cost_usd=actual, uncached_usd=uncached, saved_usd=uncached - actual, parts=parts)


def missed_usd(tokens: int, price: Price | None) -> float | None:
    """What reading ``tokens`` from the cache would have saved; None when unpriced."""
    if price is None:
        return None
    return max(0, tokens) * (price.input - price.read_rate) / PER
