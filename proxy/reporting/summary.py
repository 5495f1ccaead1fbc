"""The cost summary of a time range, computed from the ledger (dashboard API and `report`).

:func:`summarize` reads the ``requests`` table and returns JSON-ready totals (the same
counters as ``/prefixgate/stats``), hit rates, a time series (:func:`pick_step`), top
prefixes (fingerprints), miss reasons, rules drift, per-upstream and per-model tables and
``not_billable``. :func:`parse_since` reads ``24h`` / ``7d`` / ``30m`` / an ISO time.

It only reads; the ledger writes. See docs/dashboard.md.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from proxy.accounting import drift, provider_miss
from proxy.accounting.counters import COUNTERS, MAX_REWRITE_IDS, OTHER, finish, ranked
from proxy.accounting.stats import not_billable

# One SUM per counter of the table, in its order; NULL adds nothing.
_AGG = ", ".join(f"COALESCE(SUM({c.sql}), {'0.0' if c.kind == 'usd' else '0'})" for c in COUNTERS)
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str | None, now: float | None = None) -> float | None:
    """``24h`` → now − 24 h; ISO 8601 → that instant (UTC when no zone); ``all``/None → None."""
    if text is None or text.strip().lower() in ("", "all"):
        return None
    now = time.time() if now is None else now
    m = _RELATIVE.match(text.lower())
    if m:
        return now - float(m.group(1)) * _UNIT_S[m.group(2)]
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"--since: expected like 24h, 7d, 30m or an ISO time, got {text!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _totals(row: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = finish(row)  # usage but no price at all: money null, never $0
    out["token_hit_rate"] = out["cached_tokens"] / out["input_tokens"] if out["input_tokens"] else 0.0
    known = out["requests"] - out["prefix_unknown"]  # store skipped or failed: neither a hit nor a miss
    out["request_hit_rate"] = out["prefix_hits"] / known if known else 0.0
    return out


def _where(since: float | None, until: float | None) -> tuple[str, list[float]]:
    clauses, args = [], []
    if since is not None:
        clauses.append("ts >= ?")
        args.append(since)
    if until is not None:
        clauses.append("ts < ?")
        args.append(until)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def summarize(
    conn: sqlite3.Connection,
    since: float | None = None,
    until: float | None = None,
    buckets: int = 48,
    top: int = 10,
) -> dict[str, Any]:
    where, args = _where(since, until)
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
        "series": _series(conn, where, args, since, until, span, buckets),
        "top_prefixes": _top_prefixes(conn, where, args, top),
        "miss_reasons": _miss_reasons(conn, where, args),
    }


MAX_UPSTREAMS = 64  # as /prefixgate/stats (proxy.accounting.stats.MAX_UPSTREAMS)


def _upstreams(conn, where, args, limit: int = MAX_UPSTREAMS) -> dict[str, dict[str, Any]]:
    """Per upstream name (NULL: the provider's name), the same totals as the top level; past
    ``limit`` names (most requests first) the rest summed as ``other``."""
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
    return dict(sorted(out.items()))


# Bucket sizes a chart may use, seconds: round numbers on a clock.
NICE_STEPS = (
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
    2 * 86400,
    7 * 86400,
    14 * 86400,
    30 * 86400,
)


def pick_step(lo: float, hi: float, buckets: int) -> tuple[float, float, int]:
    """The smallest round bucket size (:data:`NICE_STEPS`, then whole days) whose buckets,
    aligned to its multiples (UTC), cover ``lo``..``hi`` in at most ``buckets``: (start, step, count)."""

    def fit(step: float) -> tuple[float, float, int]:
        start = math.floor(lo / step) * step
        return (
            float(start),
            float(step),
            math.floor((hi - start) / step) + 1,
        )  # the bucket holding ``hi`` included

    for step in NICE_STEPS:
        if (found := fit(step))[2] <= buckets:
            return found
    days = max(1, math.ceil((hi - lo) / max(1, buckets - 1) / 86400))
    while (found := fit(days * 86400))[2] > buckets:
        days += 1
    return found


def _series(conn, where, args, since, until, span, buckets: int) -> dict[str, Any]:
    """Cost and hit rate per bucket. The chart spans the requests in the range, not the whole
    range: one minute of traffic in a 24 h range is drawn over that minute, in 2-second
    buckets, so a first run shows a curve rather than one bar. The bucket size is the
    smallest round one (1 s … 30 d) that fits ``buckets`` buckets."""
    first, last = span
    if first is None or buckets < 1:
        return {"start": since, "step": 0, "points": []}
    lo = first if since is None else max(since, first)
    hi = last if until is None else min(until, last)
    start, step, count = pick_step(lo, max(hi, lo), buckets)
    points = [
        {
            "t": start + i * step,
            "requests": 0,
            "input_usd": 0.0,
            "cache_read_usd": 0.0,
            "cache_write_usd": 0.0,
            "output_usd": 0.0,
            "cost_usd": 0.0,
            "input_tokens": 0,
            "cached_tokens": 0,
            "hit_rate": 0.0,
        }
        for i in range(count)
    ]
    sql = (
        f"SELECT ts, cost_input_usd, cost_cache_read_usd, cost_cache_write_usd, cost_output_usd, cost_usd, "
        f"input_tokens, cached_tokens FROM requests{where}"
    )
    for ts, p_in, p_read, p_write, p_out, cost, tin, tcached in conn.execute(sql, args):
        i = min(count - 1, max(0, math.floor((ts - start) / step)))
        pt = points[i]
        pt["requests"] += 1
        pt["input_usd"] += p_in or 0.0
        pt["cache_read_usd"] += p_read or 0.0
        pt["cache_write_usd"] += p_write or 0.0
        pt["output_usd"] += p_out or 0.0
        pt["cost_usd"] += cost or 0.0
        pt["input_tokens"] += tin or 0
        pt["cached_tokens"] += tcached or 0
    for pt in points:
        pt["hit_rate"] = pt["cached_tokens"] / pt["input_tokens"] if pt["input_tokens"] else 0.0
    return {"start": start, "step": step, "points": points}


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


def _top_prefixes(conn, where, args, top: int) -> list[dict[str, Any]]:
    cond = (where + " AND" if where else " WHERE") + " prefix_segments > 0 AND chain IS NOT NULL"
    groups: dict[str, dict[str, Any]] = {}
    sql = f"SELECT chain, prefix_segments, prefix_bytes, provider, model, route, body FROM requests{cond} ORDER BY ts DESC"
    for chain, n, nbytes, provider, model, route, body in conn.execute(sql, args):
        hashes = chain.split(",")
        if n > len(hashes):
            continue
        key = hashes[n - 1]
        group = groups.get(key)
        if group is None:
            group = groups[key] = {
                "fingerprint": key,
                "provider": provider,
                "model": model,
                "segments": n,
                "tokens": estimate_tokens(nbytes or 0),
                "count": 0,
                "preview": None,
            }
        group["count"] += 1
        if group["preview"] is None and body is not None:
            group["preview"] = _preview(provider, route, body, n)
    ranked = sorted(groups.values(), key=lambda g: (-g["count"] * g["tokens"], g["fingerprint"]))[:top]
    for g in ranked:
        g["repeated_tokens"] = g["count"] * g["tokens"]
    return ranked


def _preview(provider: str, route: str, body: bytes, n: int, limit: int = 160) -> str | None:
    try:
        segments = segments_for(provider, route, orjson.loads(body))
    except orjson.JSONDecodeError:
        return None
    text = " | ".join(s.data.partition(b"\x1f")[2].decode("utf-8", "replace") for s in segments[:n])
    return text[:limit] + ("…" if len(text) > limit else "")


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
