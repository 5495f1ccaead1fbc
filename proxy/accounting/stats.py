"""In-memory totals behind ``GET /prefixgate/stats``: a recorder sink.

Counts per process since start, in total, per provider, per (provider, model) and per
configured upstream, one key per shown counter of :data:`proxy.accounting.counters.COUNTERS`,
plus rewrites per id, the provider's own miss reasons, the rules-drift table and the requests
that billed nothing (``not_billable``). Money is null, never $0, when nothing was priced; model,
rewrite-id and upstream keys are capped (then ``other``) so a client cannot grow memory.

This module does not persist anything (the ledger does) and never sees API keys.
See docs/dashboard.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import add
from typing import Any

from proxy.accounting.counters import (
    COUNTERS,
    INDEX,
    MAX_REWRITE_IDS,
    OTHER,
    ZERO,
    Cap,
    Number,
    contributions,
    finish,
    ranked,
)
from proxy.accounting.drift import MAX_DRIFT_ROWS, DriftTable
from proxy.accounting.provider_miss import ProviderMisses
from proxy.accounting.records import RequestRecord

_REQUESTS, _BILLABLE = INDEX["requests"], INDEX["billable"]
MAX_UPSTREAMS = 64
MAX_ROUTES = 20


class Counters:
    """One row of sums (the totals, a provider, a model): a value per counter of the table,
    also readable and settable by name (``row.output_tokens``). ``rewrites``: requests per
    rewrite id, on the rows that count them; ``routes``: the requests without usage by (method,
    route) → [requests, errors], at most :data:`MAX_ROUTES` pairs (then ``other``), kept in case
    the model never bills (model lists, probes)."""

    __slots__ = ("rewrites", "routes", "values")

    def __init__(self, *, rewrites: dict[str, int] | None = None) -> None:
        self.values: list[Number] = list(ZERO)
        self.rewrites = rewrites
        self.routes: dict[tuple[str, str], list[int]] | None = None

    def count_route(self, record: RequestRecord) -> None:
        routes = self.routes if self.routes is not None else {}
        self.routes = routes
        key = (record.method, record.route)
        if key not in routes and len(routes) >= MAX_ROUTES:
            key = ("", OTHER)
        row = routes.setdefault(key, [0, 0])
        row[0] += 1
        row[1] += record.status >= 400 or record.error is not None

    def add(self, record: RequestRecord) -> None:
        self.values = list(map(add, self.values, contributions(record)))

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = finish(self.values)
        if self.rewrites is not None:
            out["rewrites"] = ranked(self.rewrites)
        return out


def _by_name(i: int) -> property:
    def get(self: Counters) -> Number:
        return self.values[i]

    def set(self: Counters, value: Number) -> None:
        self.values[i] = value

    return property(get, set)


for _i, _counter in enumerate(COUNTERS):
    setattr(Counters, _counter.name, _by_name(_i))


class Stats:
    """The sums since start: ``total``, ``models`` per (provider, model) (each provider's rows add
    up to its totals, :attr:`providers`), ``upstreams`` per upstream name (the provider's when the
    record names none; at most :data:`MAX_UPSTREAMS`, a guard: they come from the config), the
    rewrites per id, the rules drift per (provider, model, field, why) and the provider's own miss
    reasons per type."""

    def __init__(
        self,
        max_models: int = 1000,
        max_rewrite_ids: int = MAX_REWRITE_IDS,
        max_upstreams: int = MAX_UPSTREAMS,
        max_drift_rows: int = MAX_DRIFT_ROWS,
    ) -> None:
        self.max_models = max_models
        self.drift = DriftTable(max_drift_rows)
        self.provider_misses = ProviderMisses()
        self._total_rewrites: dict[str, int] = {}
        self.total = Counters(rewrites=self._total_rewrites)
        self.upstreams: dict[str, Counters] = {}
        self._upstream_name = Cap(max_upstreams)
        self.models: dict[tuple[str, str], Counters] = {}
        self.provider_rewrites: dict[str, dict[str, int]] = {}
        self._rewrite_id = Cap(max_rewrite_ids)

    def handle(self, record: RequestRecord) -> None:
        d = contributions(record)
        total = self.total
        total.values = list(map(add, total.values, d))
        key = (record.provider, record.model or "")
        model = self.models.get(key)
        if model is None:
            if len(self.models) >= self.max_models:
                key = (record.provider, OTHER)
                model = self.models.get(key)
            if model is None:
                model = self.models[key] = Counters()
        model.values = list(map(add, model.values, d))
        name = self._upstream_name(record.upstream or record.provider)
        upstream = self.upstreams.get(name)
        if upstream is None:
            upstream = self.upstreams[name] = Counters()
        upstream.values = list(map(add, upstream.values, d))
        if record.usage is None:
            model.count_route(record)
        if record.drift:
            self.drift.handle(record)
        if record.provider_miss_reason:
            self.provider_misses.handle(record)
        if record.rewrites:
            by_id = self.provider_rewrites.setdefault(record.provider, {})
            for rewrite in record.rewrites:
                rewrite = self._rewrite_id(rewrite)
                self._total_rewrites[rewrite] = self._total_rewrites.get(rewrite, 0) + 1
                by_id[rewrite] = by_id.get(rewrite, 0) + 1

    @property
    def providers(self) -> dict[str, Counters]:
        """Per provider: the sum of its model rows (every request is in exactly one)."""
        out: dict[str, Counters] = {}
        for (provider, _), row in self.models.items():
            acc = out.get(provider)
            if acc is None:
                acc = out[provider] = Counters(rewrites=dict(self.provider_rewrites.get(provider, {})))
            acc.values = list(map(add, acc.values, row.values))
        return out

    async def aclose(self) -> None:
        return None

    def to_json(self) -> dict:
        out: dict = self.total.to_dict()
        out["rules_drift"] = self.drift.rows()
        out["provider_miss_reasons"] = self.provider_misses.totals()
        out["providers"] = {
            name: {**c.to_dict(), "provider_miss_reasons": self.provider_misses.of(name)}
            for name, c in sorted(self.providers.items())
        }
        out["upstreams"] = {name: c.to_dict() for name, c in sorted(self.upstreams.items())}
        rows = sorted(self.models.items(), key=lambda kv: (-kv[1].values[_REQUESTS], kv[0]))
        out["models"] = [
            {"provider": provider, "model": model or None, **c.to_dict()}
            for (provider, model), c in rows
            if c.values[_BILLABLE]
        ]
        out["not_billable"] = not_billable(
            (model, c.routes) for (_, model), c in rows if not c.values[_BILLABLE]
        )
        return out


def not_billable(
    pairs: Iterable[tuple[str | None, dict[tuple[str, str], list[int]] | None]], limit: int = 20
) -> list[dict[str, Any]]:
    """The requests of models that never reported usage, by method and route, from
    ``(model, {(method, route): [requests, errors]})`` pairs: what ``/prefixgate/stats`` and
    :func:`proxy.reporting.summary.summarize` list under ``not_billable``. At most ``limit``
    rows (the rest, and a model's routes already past its own cap, as one ``other`` row, always
    last), at most 10 model names a row."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for model, routes in pairs:
        for (method, route), (n, errors) in (routes or {}).items():
            row = merged.setdefault(
                (method, route), {"method": method, "route": route, "requests": 0, "errors": 0, "models": []}
            )
            row["requests"] += n
            row["errors"] += errors
            if model and model not in row["models"] and len(row["models"]) < 10:
                row["models"].append(model)
    folded = [merged.pop(("", OTHER))] if ("", OTHER) in merged else []
    ordered = sorted(merged.values(), key=lambda r: (-r["requests"], r["route"], r["method"]))
    if len(ordered) + len(folded) > limit:
        folded += ordered[limit - 1 :]
        ordered = ordered[: limit - 1]
    if folded:
        ordered.append(
            {
                "method": "",
                "route": OTHER,
                "requests": sum(r["requests"] for r in folded),
                "errors": sum(r["errors"] for r in folded),
                "models": [],
            }
        )
    return ordered
