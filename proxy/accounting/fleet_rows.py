"""The fleet's sums per (provider, model): added up, capped and shaped as ``/prefixgate/stats`` shows them.

:func:`capped` bounds the names (most requests first, the rest as ``other`` per provider);
:func:`shape` turns the sums into the shown counters, ``providers`` and ``models``.

Pure functions over rows already read: no I/O, no state (:mod:`.fleet_reads` reads them).
See docs/multi-replica.md.
"""

from __future__ import annotations

from operator import add
from typing import Any

from proxy.accounting.counters import COUNTERS, INDEX, OTHER, finish
from proxy.accounting.fleet_redis import from_ints

Rows = dict[tuple[str, str], list[int]]
_REQUESTS, _BILLABLE = INDEX["requests"], INDEX["billable"]


def total(rows: Rows) -> list[int]:
    acc = [0] * len(COUNTERS)
    for row in rows.values():
        acc = list(map(add, acc, row))
    return acc


def _most_requests_first(rows: Rows) -> list[tuple[tuple[str, str], list[int]]]:
    return sorted(rows.items(), key=lambda kv: (-kv[1][_REQUESTS], kv[0]))


def capped(rows: Rows, limit: int) -> Rows:
    """At most ``limit`` (provider, model) rows, most requests first; the rest summed into
    (provider, ``other``) per provider. Each replica caps its own names, but Redis holds every
    replica's, every process's since the fleet began: what a label or a JSON list can be stays bounded."""
    if len(rows) <= limit:
        return rows
    ordered = _most_requests_first(rows)
    out: Rows = dict(ordered[:limit])
    for (provider, _), row in ordered[limit:]:
        key = (provider, OTHER)
        out[key] = list(map(add, out.get(key, [0] * len(row)), row))
    return out


def shape(rows: Rows) -> dict[str, Any]:
    """Sums per (provider, model) → the shown counters, ``providers`` and the billable ``models``
    (most requests first), as :meth:`proxy.accounting.stats.Stats.to_json` shapes them."""
    out: dict[str, Any] = finish(from_ints(total(rows)))
    providers: dict[str, Rows] = {}
    for (provider, model), row in rows.items():
        providers.setdefault(provider, {})[(provider, model)] = row
    out["providers"] = {p: finish(from_ints(total(r))) for p, r in sorted(providers.items())}
    out["models"] = [
        {"provider": p, "model": m or None, **finish(from_ints(r))}
        for (p, m), r in _most_requests_first(rows)
        if r[_BILLABLE]
    ]
    return out
