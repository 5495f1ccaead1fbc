"""What one ``analyze`` pass is told: :class:`AnalyzeConfig`, checked when made.

The TTLs a prefix counts as cached for (the early end of the providers' ranges, so allowed hits
stay conservative), how many prefixes to report, the tree's and the recent bodies' bounds, and
the price table (None: no money figures).

It runs nothing (:mod:`analyzer.logs.analysis` does). See docs/analyze.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.cache_rules import ANTHROPIC_TTL_S, OPENAI_TTL_RANGE_S


@dataclass
class AnalyzeConfig:
    #: the early end of "5-10 minutes": allowed hits stay conservative
    ttl_openai: float = OPENAI_TTL_RANGE_S[0]
    ttl_anthropic: float = ANTHROPIC_TTL_S["5m"]
    top: int = 10
    max_nodes: int = 1_500_000
    recent_bodies: int = 512
    #: analyzer.pricing.PriceTable, or None for no money figures
    prices: Any = None

    def __post_init__(self) -> None:
        if self.ttl_openai <= 0 or self.ttl_anthropic <= 0:
            raise ValueError("TTLs must be > 0 seconds")
        if self.top < 1:
            raise ValueError("top must be >= 1")
        if self.recent_bodies < 1:
            raise ValueError("recent_bodies must be >= 1")
