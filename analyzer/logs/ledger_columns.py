"""The proxy ledger's ``requests`` table as a file format: its columns, in row order, and their SQL types.

The proxy writes the ledger (``proxy.accounting.ledger_schema`` builds it from
:data:`COLUMN_TYPES`) and ``prefixgate analyze`` reads it (:mod:`.reader`); both take the names
from here, so a column cannot drift between writer and reader. The table also has
``id INTEGER PRIMARY KEY`` (the row's order), which is not a record column.

It only names things: it opens no file. See docs/dashboard.md and docs/store.md for what each
column holds.
"""

from __future__ import annotations

TABLE = "requests"

COLUMN_TYPES: tuple[tuple[str, str], ...] = (
    ("request_id", "TEXT"),
    ("ts", "REAL"),
    ("tenant", "TEXT"),
    ("provider", "TEXT"),
    ("model", "TEXT"),
    ("route", "TEXT"),
    ("method", "TEXT"),
    ("status", "INTEGER"),
    ("stream", "INTEGER"),
    ("latency_ms", "REAL"),
    ("ttfb_ms", "REAL"),
    ("analysed", "INTEGER"),
    ("input_tokens", "INTEGER"),
    ("cached_tokens", "INTEGER"),
    ("cache_write_tokens", "INTEGER"),
    ("cache_write_1h_tokens", "INTEGER"),
    ("output_tokens", "INTEGER"),
    ("cost_usd", "REAL"),
    ("saved_usd", "REAL"),
    ("missed_usd", "REAL"),
    ("cost_input_usd", "REAL"),
    ("cost_cache_read_usd", "REAL"),
    ("cost_cache_write_usd", "REAL"),
    ("cost_output_usd", "REAL"),
    ("prefix_segments", "INTEGER"),
    ("prefix_bytes", "INTEGER"),
    ("total_segments", "INTEGER"),
    ("total_bytes", "INTEGER"),
    ("miss_reason", "TEXT"),
    ("rewrites", "TEXT"),
    ("error", "TEXT"),
    ("chain", "TEXT"),
    ("body", "BLOB"),
    ("flags", "TEXT"),
    ("upstream", "TEXT"),
    ("store", "TEXT"),
    ("cache_storage_usd", "REAL"),
    ("cache_write_12h_tokens", "INTEGER"),
    ("drift", "TEXT"),
    ("provider_miss_reason", "TEXT"),
    ("provider_missed_tokens", "INTEGER"),
    ("provider_missed_usd", "REAL"),
    ("replica", "TEXT"),
)
COLUMNS: tuple[str, ...] = tuple(name for name, _ in COLUMN_TYPES)
