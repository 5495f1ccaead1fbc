"""The ledger's SQLite schema, how it is opened and checked, and a record's row.

:func:`open_ledger` creates (WAL, mode 0600) or checks a ledger, adding missing columns, and
raises :class:`LedgerError` for anything unusable. :func:`row_for` turns a record into a row
(with its ``flags``); :func:`storable` repairs a row SQLite refused. Columns are named in
:mod:`analyzer.logs.ledger_columns`.

It computes no money and does not write rows (:mod:`proxy.accounting.ledger` does).
See docs/money.md.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

from analyzer.logs.ledger_columns import COLUMN_TYPES, COLUMNS, TABLE
from proxy.accounting.records import RequestRecord
from proxy.private import create_private_file, private_dir

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id INTEGER PRIMARY KEY,
    {", ".join(f"{name} {kind}" for name, kind in COLUMN_TYPES)}
);
CREATE INDEX IF NOT EXISTS requests_ts ON {TABLE} (ts);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
# Each version added columns: 2 flags; 3 upstream; 4 store; 5 cache_storage_usd; 6 12h writes, drift,
# the provider's miss reason; 7 replica.
SCHEMA_VERSION = "7"


class LedgerError(RuntimeError):
    """The ledger file cannot be used (raised at start, with the path and the reason)."""


def connect(path: str, *, busy_timeout_s: float = 5.0, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        if path != ":memory:" and not Path(path).exists():
            raise LedgerError(f"ledger {path}: no such file")
        uri = f"file:{path}?mode=ro" if path != ":memory:" else ":memory:"
        conn = sqlite3.connect(uri, uri=path != ":memory:", timeout=busy_timeout_s, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, timeout=busy_timeout_s, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return conn


def open_ledger(path: str, *, busy_timeout_s: float = 5.0) -> sqlite3.Connection:
    """Open (creating if needed: mode 0600 before SQLite creates it with the umask's) and check the
    ledger, adding the columns an older one lacks; LedgerError when it cannot be used (not a
    database, locked past the busy timeout, no folder)."""
    if path != ":memory:":
        try:
            private_dir(Path(path).parent)
        except OSError as exc:
            raise LedgerError(f"ledger {path}: cannot create its folder: {exc.strerror or exc}") from exc
        try:
            create_private_file(path)
        except OSError as exc:
            raise LedgerError(f"ledger {path}: cannot create it: {exc.strerror or exc}") from exc
    try:
        conn = connect(path, busy_timeout_s=busy_timeout_s)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript(SCHEMA)
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({TABLE})")}
        for column, kind in COLUMN_TYPES:
            if column not in have:
                conn.execute(f"ALTER TABLE {TABLE} ADD COLUMN {column} {kind}")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        conn.commit()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"ledger {path}: {exc} (move the file away or pass another --ledger)") from exc
    except OSError as exc:
        raise LedgerError(f"ledger {path}: {exc.strerror or exc}") from exc
    return conn


def row_for(record: RequestRecord, log_bodies: bool) -> tuple[Any, ...]:
    """The record as a row of :data:`COLUMNS`. It computes nothing: the money, its breakdown by
    token kind and the miss reason are the money layer's, stored as the record has them."""
    u = record.usage
    parts = record.cost_breakdown
    return (
        record.request_id,
        record.ts,
        record.tenant,
        record.provider,
        record.model,
        record.route,
        record.method,
        record.status,
        int(record.stream),
        record.latency_s * 1000.0,
        None if record.ttfb_s is None else record.ttfb_s * 1000.0,
        int(record.analysed),
        u.input_tokens if u else None,
        u.cached_tokens if u else None,
        u.cache_write_tokens if u else None,
        u.cache_write_1h_tokens if u else None,
        u.output_tokens if u else None,
        record.cost_usd,
        record.saved_usd,
        record.missed_usd,
        parts.input_usd if parts else None,
        parts.cache_read_usd if parts else None,
        parts.cache_write_usd if parts else None,
        parts.output_usd if parts else None,
        record.prefix_segments,
        record.prefix_bytes,
        record.total_segments,
        record.total_bytes,
        record.miss_reason,
        json.dumps(record.rewrites) if record.rewrites else "[]",
        record.error,
        ",".join(record.chain) if record.chain else None,
        record.body if log_bodies and record.body is not None else None,
        ",".join([*(u.flags if u is not None else ()), *record.flags]) or None,
        record.upstream,
        record.store,
        record.cache_storage_usd,
        u.cache_write_12h_tokens if u else None,
        ",".join(record.drift) if record.drift else None,
        record.provider_miss_reason,
        record.provider_missed_tokens,
        record.provider_missed_usd,
        record.replica,
    )


FLAGS_COLUMN = COLUMNS.index("flags")
_INT64 = (-(2**63), 2**63 - 1)


def _cell(value: Any) -> tuple[Any, str | None]:
    """``value`` as SQLite can store it, and why it had to change (None: unchanged). An int (a
    bool too) must fit 64 bits, a float be finite, a str valid UTF-8."""
    if value is None or isinstance(value, bytes):
        return value, None
    if isinstance(value, int):
        return (int(value), None) if _INT64[0] <= value <= _INT64[1] else (None, "out_of_range")
    if isinstance(value, float):
        return (value, None) if math.isfinite(value) else (None, "not_finite")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value, None
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8"), "bad_text"
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value), None
    return None, "unstorable"


def storable(row: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[str]]:
    """A copy of ``row`` SQLite can take, and the flags naming each cell that changed
    (also added to the row's ``flags`` column)."""
    cells: list[Any] = []
    flags: list[str] = []
    for name, value in zip(COLUMNS, row):
        cell, why = _cell(value)
        cells.append(cell)
        if why is not None:
            flags.append(f"{name}:{why}")
    if flags and len(cells) == len(COLUMNS):
        earlier = cells[FLAGS_COLUMN] if isinstance(cells[FLAGS_COLUMN], str) else None
        cells[FLAGS_COLUMN] = ",".join([earlier, *flags] if earlier else flags)
    return tuple(cells), flags


INSERT = f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
