"""Rules drift, counted per (provider, model, field, why): what ``/prefixgate/stats``, the summary,
the health check, the dashboard and ``report`` say when the caching rules went stale.

A record's ``drift`` lists ``"<field>:<why>"`` notes (:func:`proxy.accounting.money.drift_of`).
:class:`DriftTable` counts them in memory, :func:`from_ledger` over the ledger's ``drift`` column;
each row has its first and last arrival, what to update (:func:`update_for`) and the sentence
saying so (:func:`warning`). At most :data:`MAX_DRIFT_ROWS` keys, then one ``other`` row per provider.

It keeps no request data and does no I/O; :func:`from_ledger` reads an open connection it is given.
See docs/money.md (rules drift).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from proxy.accounting.counters import OTHER
from proxy.accounting.records import RequestRecord

MAX_DRIFT_ROWS = 100

PRICES_OR_RULES = (
    "update its price row (--prices FILE, analyzer/prices.json: cache_write_30m / cache_write_12h) "
    "or its generation in analyzer/cache_rules/openai.py (GENERATIONS)"
)
_UPDATE = {
    "not_billed_by_price_row": PRICES_OR_RULES,
    "unknown_field": "teach analyzer/usage.py the field (and price it in --prices FILE / analyzer/prices.json)",
    "unknown_type": "teach analyzer/usage.py the iterations type (ITERATIONS_IN_TOP_LEVEL / ITERATIONS_BILLED_APART)",
    "unknown_shape": "teach analyzer/usage.py the block's new shape",
    "above_prompt": "check analyzer/usage.py: the provider no longer counts the field inside the prompt total",
}


def split(note: str) -> tuple[str, str]:
    """``"prompt_tokens_details.cache_x:unknown_field"`` → (field, why); a note without a
    ``:`` is all field (why ``""``)."""
    field, sep, why = note.rpartition(":")
    return (field, why) if sep else (note, "")


def update_for(why: str) -> str:
    """What to update for a note's ``why``."""
    return _UPDATE.get(why, "update analyzer/prices.json (--prices FILE) or analyzer/cache_rules")


def warning(row: dict[str, Any]) -> str:
    """One drift row as a sentence naming what to update (the health check's, the dashboard's)."""
    model = row["model"] or "(no model)"
    last = (
        datetime.fromtimestamp(row["last_seen"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if row["last_seen"]
        else "?"
    )
    return (
        f"usage of {model} ({row['provider']}) reports {row['field']} the rules do not expect "
        f"({row['why'] or 'unexpected'}; {row['count']:,} request(s), last {last}): {row['update']}"
    )


def _row(
    provider: str, model: str, field: str, why: str, count: int, first: float, last: float
) -> dict[str, Any]:
    row = {
        "provider": provider,
        "model": model,
        "field": field,
        "why": why,
        "count": count,
        "first_seen": first,
        "last_seen": last,
        "update": update_for(why),
    }
    row["warning"] = warning(row)
    return row


def _ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most requests first; each provider's ``other`` row last."""
    return sorted(
        rows,
        key=lambda r: (
            r["model"] == OTHER and r["field"] == OTHER,
            -r["count"],
            r["provider"],
            r["model"],
            r["field"],
            r["why"],
        ),
    )


class DriftTable:
    """In-memory counts per (provider, model, field, why), each [count, first_seen, last_seen]:
    a recorder sink's part of the stats."""

    __slots__ = ("limit", "_rows")

    def __init__(self, limit: int = MAX_DRIFT_ROWS) -> None:
        self.limit = limit
        self._rows: dict[tuple[str, str, str, str], list[float]] = {}

    def handle(self, record: RequestRecord) -> None:
        if not record.drift:
            return
        for note in dict.fromkeys(record.drift):
            key = (record.provider, record.model or "", *split(note))
            row = self._rows.get(key)
            if row is None:
                if len(self._rows) >= self.limit:
                    key = (record.provider, OTHER, OTHER, OTHER)
                    row = self._rows.get(key)
                if row is None:
                    row = self._rows[key] = [0, record.ts, record.ts]
            row[0] += 1
            row[1] = min(row[1], record.ts)
            row[2] = max(row[2], record.ts)

    def rows(self) -> list[dict[str, Any]]:
        return _ordered([_row(*key, int(n), first, last) for key, (n, first, last) in self._rows.items()])


def from_ledger(
    conn: sqlite3.Connection, where: str, args: list, limit: int = MAX_DRIFT_ROWS
) -> list[dict[str, Any]]:
    """The same table over the ledger's ``drift`` column (comma-joined notes) in a range
    (``where``/``args`` as :mod:`proxy.reporting.summary` builds them): the ``limit`` keys with most requests,
    the rest as one ``other`` row per provider."""
    cond = (where + " AND" if where else " WHERE") + " drift IS NOT NULL"
    acc: dict[tuple[str, str, str, str], list[float]] = {}
    sql = f"SELECT provider, model, drift, COUNT(*), MIN(ts), MAX(ts) FROM requests{cond} GROUP BY provider, model, drift"
    for provider, model, drift, n, first, last in conn.execute(sql, args):
        for note in dict.fromkeys(part for part in (drift or "").split(",") if part):
            key = (provider or "", model or "", *split(note))
            row = acc.setdefault(key, [0, first, last])
            row[0] += n
            row[1], row[2] = min(row[1], first), max(row[2], last)
    ranked = sorted(acc.items(), key=lambda kv: (-kv[1][0], kv[0]))
    kept = [_row(*key, int(n), first, last) for key, (n, first, last) in ranked[:limit]]
    folded: dict[str, list[float]] = {}
    for (provider, *_), (n, first, last) in ranked[limit:]:
        row = folded.setdefault(provider, [0, first, last])
        row[0] += n
        row[1], row[2] = min(row[1], first), max(row[2], last)
    kept += [
        _row(provider, OTHER, OTHER, OTHER, int(n), first, last)
        for provider, (n, first, last) in folded.items()
    ]
    return _ordered(kept)
