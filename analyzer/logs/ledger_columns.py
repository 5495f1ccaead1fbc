"""The proxy ledger's ``requests`` table as a file format: its columns, in row order, and their SQL types.

The proxy writes the ledger (``proxy.accounting.ledger_schema`` builds its schema and rows
from :data:`COLUMN_TYPES`) and ``prefixgate analyze`` reads it (:mod:`.reader`); both take the
names from here, so a renamed or added column cannot drift between writer and reader. The
table also has ``id INTEGER PRIMARY KEY`` (the row's order), which is not a record column.

Money columns end in ``_usd``, durations in ``_ms``; ``rewrites`` holds a JSON array of the
rewrite ids applied (``'[]'`` when none; NULL in rows written before the column existed);
``chain`` the comma-joined first 8 bytes (hex) of each prefix-chain hash; ``flags`` what was
clamped or nulled on the way, or could not be priced exactly (``cache_write_tokens:ttl_split_unknown``:
Chat writes of a request with a 12-hour breakpoint; the row's cost is then NULL); ``upstream`` the configured upstream's name (NULL in rows
written before the column existed, or when the path named none); ``store`` the prefix
look-up's outcome: ``ok``, ``unavailable`` (the store failed or missed its deadline),
``skipped`` (its breaker was open, or it waited for the shared tenant secret), ``none``
(no look-up needed) or ``cancelled`` (the request ended while its look-up was in flight);
NULL in rows written before the column existed; ``cache_storage_usd`` what keeping an
explicit cache (Gemini's ``cachedContents``, ``--gemini-auto-cache``) cost, on the row of
the background create or refresh call that bought it (NULL: none bought, or the storage is
unpriced); ``cache_write_12h_tokens`` OpenAI's 12-hour cache writes (inside
``cache_write_tokens``); ``drift`` the comma-joined rules-drift notes (a usage field or value
the model's rules do not expect; the row's cost is then NULL); ``provider_miss_reason``,
``provider_missed_tokens`` and ``provider_missed_usd`` the provider's own cache-miss diagnosis
(Anthropic's ``diagnostics.cache_miss_reason``) and its price. This module only names
things; it opens no file.
"""

from __future__ import annotations

TABLE = "requests"

COLUMN_TYPES: tuple[tuple[str, str], ...] = (
    ("request_id", "TEXT"), ("ts", "REAL"), ("tenant", "TEXT"), ("provider", "TEXT"), ("model", "TEXT"),
    ("route", "TEXT"), ("method", "TEXT"), ("status", "INTEGER"), ("stream", "INTEGER"),
    ("latency_ms", "REAL"), ("ttfb_ms", "REAL"), ("analysed", "INTEGER"),
    ("input_tokens", "INTEGER"), ("cached_tokens", "INTEGER"), ("cache_write_tokens", "INTEGER"),
    ("cache_write_1h_tokens", "INTEGER"), ("output_tokens", "INTEGER"),
    ("cost_usd", "REAL"), ("saved_usd", "REAL"), ("missed_usd", "REAL"),
    ("cost_input_usd", "REAL"), ("cost_cache_read_usd", "REAL"), ("cost_cache_write_usd", "REAL"), ("cost_output_usd", "REAL"),
    ("prefix_segments", "INTEGER"), ("prefix_bytes", "INTEGER"), ("total_segments", "INTEGER"), ("total_bytes", "INTEGER"),
    ("miss_reason", "TEXT"), ("rewrites", "TEXT"), ("error", "TEXT"), ("chain", "TEXT"), ("body", "BLOB"), ("flags", "TEXT"),
    ("upstream", "TEXT"), ("store", "TEXT"), ("cache_storage_usd", "REAL"),
    ("cache_write_12h_tokens", "INTEGER"), ("drift", "TEXT"),
    ("provider_miss_reason", "TEXT"), ("provider_missed_tokens", "INTEGER"), ("provider_missed_usd", "REAL"),
)
COLUMNS: tuple[str, ...] = tuple(name for name, _ in COLUMN_TYPES)
