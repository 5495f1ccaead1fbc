"""The summary's time series: cost by token kind and token hit rate per bucket of round size.

:func:`pick_step` chooses the bucket: the smallest round size (1 s … 30 d, then whole days) that
covers the range in the buckets asked for. :func:`series` spans the requests in the range, not the
whole range: one minute of traffic in a 24 h range is drawn over that minute, in 2-second buckets,
so a first run shows a curve rather than one bar.

It only reads the ledger connection it is given. See docs/dashboard.md.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

MINUTE, HOUR, DAY = 60, 3600, 86400
NICE_STEPS = (
    *(1, 2, 5, 10, 15, 30),
    *(m * MINUTE for m in (1, 2, 5, 10, 15, 30)),
    *(h * HOUR for h in (1, 2, 3, 6, 12)),
    *(d * DAY for d in (1, 2, 7, 14, 30)),
)
_SUMS = (
    "input_usd",
    "cache_read_usd",
    "cache_write_usd",
    "output_usd",
    "cost_usd",
    "input_tokens",
    "cached_tokens",
)
_SQL = (
    "SELECT ts, cost_input_usd, cost_cache_read_usd, cost_cache_write_usd, cost_output_usd, cost_usd, "
    "input_tokens, cached_tokens FROM requests"
)


def pick_step(lo: float, hi: float, buckets: int) -> tuple[float, float, int]:
    """The smallest round bucket size (:data:`NICE_STEPS`, then whole days) whose buckets,
    aligned to its multiples (UTC), cover ``lo``..``hi`` (the bucket holding ``hi`` included) in
    at most ``buckets``: (start, step, count)."""

    def fit(step: float) -> tuple[float, float, int]:
        start = math.floor(lo / step) * step
        return float(start), float(step), math.floor((hi - start) / step) + 1

    for step in NICE_STEPS:
        if (found := fit(step))[2] <= buckets:
            return found
    days = max(1, math.ceil((hi - lo) / max(1, buckets - 1) / DAY))
    while (found := fit(days * DAY))[2] > buckets:
        days += 1
    return found


def series(
    conn: sqlite3.Connection,
    where: str,
    args: list,
    since: float | None,
    until: float | None,
    span: tuple[float | None, float | None],
    buckets: int,
) -> dict[str, Any]:
    """Requests, cost by token kind, tokens and hit rate per bucket, over ``span`` (the first and
    last request's ``ts`` in the range) cut to the range."""
    first, last = span
    if first is None or last is None or buckets < 1:
        return {"start": since, "step": 0, "points": []}
    lo = first if since is None else max(since, first)
    hi = last if until is None else min(until, last)
    start, step, count = pick_step(lo, max(hi, lo), buckets)
    points: list[dict[str, Any]] = [
        {"t": start + i * step, "requests": 0, **{k: 0 if k.endswith("tokens") else 0.0 for k in _SUMS}}
        for i in range(count)
    ]
    for ts, *values in conn.execute(_SQL + where, args):
        point = points[min(count - 1, max(0, math.floor((ts - start) / step)))]
        point["requests"] += 1
        for key, v in zip(_SUMS, values):
            point[key] += v or 0
    for point in points:
        point["hit_rate"] = point["cached_tokens"] / point["input_tokens"] if point["input_tokens"] else 0.0
    return {"start": start, "step": step, "points": points}
