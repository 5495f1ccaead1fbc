"""Stream request records from JSONL logs and from the proxy's SQLite ledger.

A JSONL line is a bare body or a ``{"request"|"body", "response"|"usage", "ts"|"timestamp",
"provider", "route", "model", "session_id"}`` record (shape guessed when absent). A ledger row
(columns in :mod:`.ledger_columns`) gives usage (:func:`ledger_usage`), timing, ``chain``, the
proxy's money, whether its prefix was known, and the body under ``--log-bodies``. Records are
yielded one at a time; an unreadable line or row goes to ``on_error(file, line, message)``.

It does NOT hold the log in memory or stop at a bad record. See docs/analyze.md.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from analyzer.cost import WRITES_NOT_BILLED
from analyzer.logs.ledger_columns import COLUMNS, TABLE
from analyzer.segments import guess_shape
from analyzer.usage import Usage, from_any

OnError = Callable[[str, int | None, str], None]
LEDGER_SUFFIXES = {".sqlite", ".sqlite3", ".db"}


@dataclass(slots=True)
class LogRecord:
    source: str
    line: int
    provider: str
    route: str
    model: str
    ts: float | None
    body: dict[str, Any] | None
    usage: Usage | None
    session: str | None = None
    #: ledger rows without a body: 8-byte hex per segment
    chain_hex: list[str] | None = None
    total_bytes: int | None = None
    #: ledger rows: leading segments the proxy had seen before …
    prefix_segments: int = 0
    #: … and their exact size in bytes (the only segment end a row states)
    prefix_bytes: int = 0
    #: False: a ledger row whose prefix the proxy could not look up (store skipped)
    prefix_known: bool = True
    #: a priced ledger row: the proxy's (cost, saved, missed) USD
    ledger_money: tuple[float, float | None, float | None] | None = None
    #: a row of the proxy's ledger (not a log line): no usage there means it billed nothing
    ledger: bool = False


def ledger_ends(n: int, total_bytes: int, prefix_segments: int, prefix_bytes: int) -> list[int]:
    """Cumulative byte ends of ``n`` segments when a ledger row states only the total and the
    size of its repeated prefix: exact at the prefix's end, spread evenly on either side of it."""
    k = prefix_segments if 0 < prefix_segments <= n and 0 < prefix_bytes <= total_bytes else 0
    if k == 0:
        return [int(total_bytes * (i + 1) / n) for i in range(n)]
    head = [int(prefix_bytes * (i + 1) / k) for i in range(k)]
    rest = n - k
    return head + [prefix_bytes + int((total_bytes - prefix_bytes) * (i + 1) / rest) for i in range(rest)]


def _notes(text: Any) -> tuple[str, ...]:
    return tuple(n for n in text.split(",") if n) if isinstance(text, str) else ()


def ledger_usage(row: dict[str, Any]) -> Usage:
    """A ledger row's :class:`Usage`: its token columns (the 1-hour and 12-hour writes inside the
    writes), its ``flags`` (a number clamped, a TTL split unknown, a cell repaired) and its
    ``drift`` notes, so a row the proxy priced null stays null here (money is exact or null);
    but writes on a price row that billed none are checked again against the prices ``analyze``
    uses (:func:`analyzer.cost.rules_drift`): a ``--prices`` file that now bills them prices them.
    ValueError when the counts contradict each other."""
    write = row.get("cache_write_tokens") or 0
    w1h = min(row.get("cache_write_1h_tokens") or 0, write)
    w12h = min(row.get("cache_write_12h_tokens") or 0, write - w1h)
    drift = tuple(
        n for n in _notes(row.get("drift")) if n != WRITES_NOT_BILLED
    )  # that one depends on the prices: re-checked
    return Usage(
        row["input_tokens"] or 0,
        row.get("cached_tokens") or 0,
        write,
        w1h,
        row.get("output_tokens") or 0,
        flags=_notes(row.get("flags")),
        cache_write_12h_tokens=w12h,
        drift=drift,
    )


def _ts(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _session(record: dict[str, Any], body: dict[str, Any]) -> str | None:
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    for v in (
        record.get("session_id"),
        record.get("session"),
        body.get("prompt_cache_key"),
        body.get("user"),
        meta.get("user_id"),
    ):
        if isinstance(v, (str, int)) and v != "":
            return str(v)
    return None


def record_from(value: Any, source: str, line: int) -> LogRecord | str:
    """A :class:`LogRecord` for one parsed JSONL value, or a message saying why not."""
    if not isinstance(value, dict):
        return "not a JSON object"
    record: dict[str, Any] = {}
    body = value
    for key in ("request", "body"):
        if isinstance(value.get(key), dict):
            record, body = value, value[key]
            break
    shape = guess_shape(body)
    if shape is None:
        return "no request body (expected messages, input or prompt)"
    provider, route = shape
    if record.get("provider") in ("openai", "anthropic"):
        provider = record["provider"]
        route = record["route"] if isinstance(record.get("route"), str) else route
    usage_block = None
    response = record.get("response")
    if isinstance(response, dict) and isinstance(response.get("usage"), dict):
        usage_block = response["usage"]
    elif isinstance(record.get("usage"), dict):
        usage_block = record["usage"]
    usage = from_any(usage_block) if usage_block is not None else None
    model = body.get("model") or record.get("model") or ""
    ts = _ts(record.get("ts", record.get("timestamp", record.get("created_at"))))
    return LogRecord(
        source,
        line,
        provider,
        route,
        model if isinstance(model, str) else "",
        ts,
        body,
        usage,
        _session(record, body),
    )


def read_jsonl(
    path: str, on_error: OnError, on_bytes: Callable[[int], None] | None = None
) -> Iterator[LogRecord]:
    try:
        handle = open(path, "rb")
    except OSError as exc:
        on_error(path, None, f"cannot read: {exc.strerror or exc}")
        return
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            if on_bytes:
                on_bytes(len(raw))
            if not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                on_error(path, lineno, f"line is not JSON: {exc.msg} (column {exc.colno})")
                continue
            rec = record_from(value, path, lineno)
            if isinstance(rec, str):
                on_error(path, lineno, rec)
            else:
                yield rec


def ledger_rows(path: str) -> int | None:
    """How many rows a ledger holds (for a progress bar); None when it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            return conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def read_ledger(
    path: str, on_error: OnError, on_rows: Callable[[int], None] | None = None
) -> Iterator[LogRecord]:
    try:
        conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        cols = {row[1] for row in conn.execute(f"PRAGMA table_info({TABLE})")}
    except sqlite3.Error as exc:
        on_error(path, None, f"not a readable SQLite ledger: {exc}")
        return
    if not cols:
        on_error(path, None, "no `requests` table: not a prefixgate ledger")
        conn.close()
        return
    wanted = [c for c in ("id", *COLUMNS) if c in cols]  # an older ledger lacks the newer columns
    try:
        for row in conn.execute(f"SELECT {', '.join(wanted)} FROM {TABLE} ORDER BY id"):
            if on_rows:
                on_rows(1)
            r = dict(zip(wanted, row))
            body = None
            if r.get("body"):
                try:
                    parsed = orjson.loads(r["body"])
                    body = parsed if isinstance(parsed, dict) else None
                except orjson.JSONDecodeError:
                    on_error(path, r.get("id"), "row body is not JSON; using its chain column")
            usage = None
            if r.get("input_tokens") is not None:
                try:
                    usage = ledger_usage(r)
                except ValueError as exc:
                    on_error(path, r.get("id"), f"row usage is inconsistent: {exc}")
            chain = [h for h in (r.get("chain") or "").split(",") if h]
            if body is None and not chain:
                continue  # unanalysed request (no body kept, no segments): nothing to place in the tree
            money = (
                (r["cost_usd"], r.get("saved_usd"), r.get("missed_usd"))
                if r.get("cost_usd") is not None
                else None
            )
            yield LogRecord(
                path,
                r.get("id") or 0,
                r.get("provider") or "",
                r.get("route") or "",
                r.get("model") or "",
                r.get("ts"),
                body,
                usage,
                r.get("tenant"),
                chain or None,
                r.get("total_bytes"),
                r.get("prefix_segments") or 0,
                r.get("prefix_bytes") or 0,
                prefix_known=r.get("prefix_segments") is not None or "prefix_segments" not in r,
                ledger_money=money,
                ledger=True,
            )
    except sqlite3.Error as exc:
        on_error(path, None, f"ledger read failed: {exc}")
    finally:
        conn.close()


def is_ledger(path: str) -> bool:
    """A .sqlite/.sqlite3/.db name, or any file that starts with SQLite's magic header."""
    if Path(path).suffix.lower() in LEDGER_SUFFIXES:
        return True
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def read_any(
    path: str, on_error: OnError, on_progress: Callable[[int], None] | None = None
) -> Iterator[LogRecord]:
    """Records of a ledger or a JSONL log; ``on_progress`` gets the rows (ledger) or bytes (JSONL) read."""
    if is_ledger(path):
        yield from read_ledger(path, on_error, on_progress)
    else:
        yield from read_jsonl(path, on_error, on_progress)
