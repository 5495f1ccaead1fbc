"""The cost summary of a time range, computed from the ledger (dashboard API and `report`).

:func:`summarize` reads the ``requests`` table and returns JSON-ready totals (the same counters
as ``/prefixgate/stats``), hit rates, per-provider, per-upstream and per-model tables,
``not_billable``, rewrites, miss reasons, the provider's own, rules drift, the time series
(:mod:`.series`) and the top prefixes (:mod:`.top_prefixes`).

It only reads; the ledger writes. See docs/dashboard.md.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from proxy.accounting import drift, provider_miss
from proxy.accounting.counters import COUNTERS, MAX_REWRITE_IDS, OTHER, finish, ranked
from proxy.accounting.stats import MAX_UPSTREAMS, not_billable
from proxy.reporting.series import series
from proxy.reporting.time_range import where as range_where
from proxy.reporting.top_prefixes import top_prefixes
from proxy.upstream_spec import MAX_REPLICAS

# One SUM per counter of the table, in its order; NULL adds nothing.
_AGG = ", ".join(f"COALESCE(SUM({c.sql}), {'0.0' if c.kind == 'usd' else '0'})" for c in COUNTERS)


def hit_rates(row: dict[str, Any]) -> dict[str, Any]:
    """``token_hit_rate`` and ``request_hit_rate`` set on a row of totals, which is returned; a
    request whose prefix is unknown (the store skipped or failed) is neither a hit nor a miss."""
    row["token_hit_rate"] = row["cached_tokens"] / row["input_tokens"] if row["input_tokens"] else 0.0
    known = row["requests"] - row["prefix_unknown"]
    row["request_hit_rate"] = row["prefix_hits"] / known if known else 0.0
    return row


def _totals(row: Sequence[Any]) -> dict[str, Any]:
    """Sums in the table's order → the JSON totals (:func:`~proxy.accounting.counters.finish`)
    with their hit rates."""
    return hit_rates(finish(row))


def summarize(
    conn: sqlite3.Connection,
    since: float | None = None,
    until: float | None = None,
    buckets: int = 48,
    top: int = 10,
) -> dict[str, Any]:
    where, args = range_where(since, until)
    totals = _totals(conn.execute(f"SELECT {_AGG} FROM requests{where}", args).fetchone())
    providers = {
        row[0]: _totals(row[1:])
        for row in conn.execute(
            f"SELECT provider, {_AGG} FROM requests{where} GROUP BY provider ORDER BY provider", args
        )
    }
    upstreams = _upstreams(conn, where, args)
    models = [
        {"provider": row[0], "model": row[1], **_totals(row[2:])}
        for row in conn.execute(
            f"SELECT provider, model, {_AGG} FROM requests{where} GROUP BY provider, model", args
        )
    ]
    models.sort(key=lambda m: (-m["requests"], m["provider"] or "", m["model"] or ""))
    quiet = {(m["provider"], m["model"]) for m in models if not m["billable"]}
    models = [m for m in models if m["billable"]]
    totals["rewrites"], by_provider = _rewrites(conn, where, args)
    misses = provider_miss.from_ledger(conn, where, args)
    totals["rules_drift"] = drift.from_ledger(conn, where, args)
    totals["provider_miss_reasons"] = misses.totals()
    for name, block in providers.items():
        block["rewrites"] = by_provider.get(name, {})
        block["provider_miss_reasons"] = misses.of(name)
    span = conn.execute(f"SELECT MIN(ts), MAX(ts) FROM requests{where}", args).fetchone()
    return {
        "since": since,
        "until": until,
        "first_ts": span[0],
        "last_ts": span[1],
        **totals,
        "providers": providers,
        "upstreams": upstreams,
        "models": models,
        "not_billable": _not_billable(conn, where, args, quiet),
        "series": series(conn, where, args, since, until, span, buckets),
        "top_prefixes": top_prefixes(conn, where, args, top),
        "miss_reasons": _miss_reasons(conn, where, args),
    }


def _upstreams(conn, where, args, limit: int = MAX_UPSTREAMS) -> dict[str, dict[str, Any]]:
    """Per upstream name (NULL: the provider's name), the same totals as the top level; past
    ``limit`` names (most requests first) the rest summed as ``other``. A pool's upstream also
    has ``replicas``: the same totals per replica that served its rows (at most
    :data:`~proxy.upstream_spec.MAX_REPLICAS`, most requests first)."""
    rows = conn.execute(
        f"SELECT COALESCE(upstream, provider) AS name, {_AGG} FROM requests{where} GROUP BY name", args
    ).fetchall()
    rows.sort(key=lambda row: (-row[1], row[0] or ""))
    out = {row[0]: _totals(row[1:]) for row in rows[:limit]}
    if len(rows) > limit:
        sums = [0] * (len(rows[0]) - 1)
        for row in rows[limit:]:
            sums = [a + (b or 0) for a, b in zip(sums, row[1:])]
        out[OTHER] = _totals(sums)
    cond = (where + " AND" if where else " WHERE") + " replica IS NOT NULL"
    replicas = conn.execute(
        f"SELECT COALESCE(upstream, provider) AS name, replica, {_AGG} FROM requests{cond} GROUP BY name, replica",
        args,
    ).fetchall()
    replicas.sort(key=lambda row: (-row[2], row[1]))
    for name, replica, *sums in replicas:
        pool = out[name].setdefault("replicas", {}) if name in out else None
        if pool is not None and len(pool) < MAX_REPLICAS:
            pool[replica] = _totals(sums)
    return dict(sorted(out.items()))


def _not_billable(conn, where, args, quiet: set[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """Requests of the (provider, model) pairs none of whose requests reported usage — model
    lists (``GET /v1/models``, no model), probes, calls that only failed — by method and route
    (:func:`proxy.accounting.stats.not_billable`, the shape ``/prefixgate/stats`` gives): they
    bill nothing, so they are listed apart from the per-model money table."""
    if not quiet:
        return []
    by_model: dict[tuple[str, str | None], dict[tuple[str, str], list[int]]] = {}
    sql = (
        f"SELECT provider, model, method, route, COUNT(*), SUM(status >= 400 OR error IS NOT NULL) FROM requests{where} "
        "GROUP BY provider, model, method, route"
    )
    for provider, model, method, route, n, errors in conn.execute(sql, args):
        if (provider, model) in quiet:
            by_model.setdefault((provider, model), {})[(method or "", route or "")] = [n, errors or 0]
    return not_billable((model, routes) for (_, model), routes in by_model.items())


def _rewrites(
    conn, where, args, limit: int = MAX_REWRITE_IDS
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Requests per rewrite id (the ``rewrites`` column's JSON arrays), in total and per
    provider: the ``limit`` most frequent ids by name, the rest together as ``other``."""
    rows = conn.execute(
        "SELECT provider, j.value, COUNT(*) FROM requests, "
        "json_each(CASE WHEN json_valid(requests.rewrites) THEN requests.rewrites ELSE '[]' END) AS j"
        f"{(where + ' AND' if where else ' WHERE')} j.type = 'text' GROUP BY provider, j.value",
        args,
    ).fetchall()
    total: dict[str, int] = {}
    for _, rewrite, n in rows:
        total[rewrite] = total.get(rewrite, 0) + n
    keep = set(list(ranked(total))[:limit])
    folded: dict[str, int] = {}
    per_provider: dict[str, dict[str, int]] = {}
    for provider, rewrite, n in rows:
        key = rewrite if rewrite in keep else OTHER
        folded[key] = folded.get(key, 0) + n
        by_id = per_provider.setdefault(provider, {})
        by_id[key] = by_id.get(key, 0) + n
    return ranked(folded), {p: ranked(c) for p, c in per_provider.items()}


def _miss_reasons(conn, where, args) -> list[dict[str, Any]]:
    """Requests and missed dollars per prefixgate reason code; ``missed_usd`` null (never $0)
    when none of the reason's rows was priced (an unpriced model, rules drift, flags)."""
    cond = (where + " AND" if where else " WHERE") + " miss_reason IS NOT NULL"
    reasons: dict[str, dict[str, Any]] = {}
    for reason, missed in conn.execute(f"SELECT miss_reason, missed_usd FROM requests{cond}", args):
        code = reason.split(";", 1)[0].strip()
        entry = reasons.setdefault(code, {"reason": code, "count": 0, "missed_usd": None})
        entry["count"] += 1
        if missed is not None:
            entry["missed_usd"] = (entry["missed_usd"] or 0.0) + missed
    return sorted(reasons.values(), key=lambda r: (-r["count"], r["reason"]))
