"""A time range of the ledger: parsed from ``--since`` / ``?since=``, and its SQL condition.

:func:`parse_since` reads ``24h`` / ``7d`` / ``30m`` / an ISO time / unix seconds; :func:`where`
turns a (since, until) pair into the ``WHERE`` clause and arguments every summary query shares
(and :mod:`proxy.accounting.drift` and :mod:`proxy.accounting.provider_miss` take as given).

It reads no ledger. See docs/dashboard.md.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

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


def where(since: float | None, until: float | None) -> tuple[str, list[float]]:
    """(``" WHERE ts >= ? AND ts < ?"`` or the part of it the range needs, its arguments)."""
    clauses, args = [], []
    if since is not None:
        clauses.append("ts >= ?")
        args.append(since)
    if until is not None:
        clauses.append("ts < ?")
        args.append(until)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args
