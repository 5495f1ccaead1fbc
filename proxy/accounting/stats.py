"""In-memory totals behind ``GET /prefixgate/stats``: a recorder sink.

Counts per process since start: totals, per provider, per (provider, model). Keys:
``requests``, ``prefix_hits`` (requests with a repeated prefix), ``input_tokens``,
``cached_tokens``, ``cache_write_tokens``, ``output_tokens`` (from the usage the upstream
reported), ``unanalysed`` (bodies that did not parse), ``errors`` (status ≥ 400 or a
proxy-side error), ``prefix_unknown`` (the prefix store was skipped or failed: neither a
hit nor a miss), and the money the money layer put on records: ``cost_usd``,
``saved_usd``, ``missed_usd``, ``unpriced`` (requests with usage but no price).

Model names come from request bodies, so per-model rows are capped (``max_models``
distinct (provider, model) pairs); later models are counted in one ``"other"`` row per
provider, and totals stay exact. Without the cap a client could grow the process's memory
and this JSON without bound.

Token counts arrive sanitised (:mod:`analyzer.usage` caps each at 10⁹ and flags it), so the
sums stay far inside the 64-bit integers orjson writes.

This module does not persist anything (the ledger does) and never sees API keys.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from proxy.accounting.records import RequestRecord


@dataclass(slots=True)
class Counters:
    requests: int = 0
    prefix_hits: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    unanalysed: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    saved_usd: float = 0.0
    missed_usd: float = 0.0
    unpriced: int = 0
    prefix_unknown: int = 0
    priced: int = 0  # not reported; tells "nothing here had a price" (null) from "$0"

    def add(self, r: RequestRecord) -> None:
        self.requests += 1
        if r.prefix_segments is None:
            self.prefix_unknown += 1
        else:
            self.prefix_hits += r.prefix_segments > 0
        self.unanalysed += not r.analysed
        self.errors += r.status >= 400 or r.error is not None
        if r.usage is not None:
            self.input_tokens += r.usage.input_tokens
            self.cached_tokens += r.usage.cached_tokens
            self.cache_write_tokens += r.usage.cache_write_tokens
            self.output_tokens += r.usage.output_tokens
            if r.cost_usd is None:
                self.unpriced += 1
        if r.cost_usd is not None:
            self.priced += 1
        self.cost_usd += r.cost_usd or 0.0
        self.saved_usd += r.saved_usd or 0.0
        self.missed_usd += r.missed_usd or 0.0

    def to_dict(self) -> dict[str, int | float | None]:
        """Money is null, never $0, when requests had usage but none of them had a price."""
        out: dict[str, int | float | None] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "priced"}
        unknown = self.unpriced > 0 and self.priced == 0
        for key in ("cost_usd", "saved_usd", "missed_usd"):
            out[key] = None if unknown else round(float(getattr(self, key)), 9) + 0.0  # never "-0.0"
        return out


OTHER_MODEL = "other"


class Stats:
    def __init__(self, max_models: int = 1000) -> None:
        self.max_models = max_models
        self.total = Counters()
        self.providers: dict[str, Counters] = {}
        self.models: dict[tuple[str, str], Counters] = {}

    def handle(self, record: RequestRecord) -> None:
        self.total.add(record)
        self.providers.setdefault(record.provider, Counters()).add(record)
        key = (record.provider, record.model or "")
        if key not in self.models and len(self.models) >= self.max_models:
            key = (record.provider, OTHER_MODEL)
        self.models.setdefault(key, Counters()).add(record)

    async def aclose(self) -> None:
        return None

    def to_json(self) -> dict:
        out: dict = self.total.to_dict()
        out["providers"] = {name: c.to_dict() for name, c in sorted(self.providers.items())}
        out["models"] = [
            {"provider": provider, "model": model or None, **c.to_dict()}
            for (provider, model), c in sorted(self.models.items(), key=lambda kv: (-kv[1].requests, kv[0]))
        ]
        return out
