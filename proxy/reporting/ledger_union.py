"""One or several ledgers opened read-only as one ``requests`` table (several replicas' ledgers).

:func:`open_ledgers` attaches each ledger (at most :data:`MAX_LEDGERS`, SQLite's limit on one
connection) and joins their rows in a temporary view, a column an older ledger lacks reading as
NULL. A missing file, or a database that is no ledger, raises
:class:`~proxy.accounting.ledger_schema.LedgerError`.

It never writes to a ledger. See docs/dashboard.md.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from analyzer.logs.ledger_columns import COLUMNS
from proxy.accounting.ledger_schema import LedgerError, connect

MAX_LEDGERS = 10


def open_ledgers(paths: list[str]) -> sqlite3.Connection:
    if len(paths) == 1:
        return connect(paths[0], readonly=True)
    if len(paths) > MAX_LEDGERS:
        raise LedgerError(f"at most {MAX_LEDGERS} ledgers at once, got {len(paths)}")
    conn = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
    selects = []
    for i, path in enumerate(paths):
        if not Path(path).exists():
            raise LedgerError(f"ledger {path}: no such file")
        conn.execute(f"ATTACH DATABASE ? AS l{i}", (f"file:{path}?mode=ro",))
        present = {row[1] for row in conn.execute(f"PRAGMA l{i}.table_info(requests)")}
        if not present:
            raise LedgerError(f"ledger {path}: not a prefixgate ledger (no requests table)")
        cols = ", ".join(c if c in present else f"NULL AS {c}" for c in COLUMNS)
        selects.append(f"SELECT {cols} FROM l{i}.requests")
    conn.execute("CREATE TEMP VIEW requests AS " + " UNION ALL ".join(selects))
    return conn
