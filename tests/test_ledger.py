from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from analyzer.pricing import PriceTable
from analyzer.usage import Usage
from proxy.ledger import COLUMNS, Ledger, LedgerError, open_ledger
from proxy.records import RequestRecord


def record(i: int, **kw) -> RequestRecord:
    base = dict(request_id=f"r{i}", ts=1_700_000_000.0 + i, tenant="t" * 16, provider="openai",
                route="/v1/chat/completions", model="gpt-4o-mini", status=200, latency_s=0.012, ttfb_s=0.004,
                analysed=True, usage=Usage(2006, 1920, 0, 0, 300), prefix_segments=1, prefix_bytes=7000,
                total_segments=2, total_bytes=7100, cost_usd=0.0003369, saved_usd=0.000144, missed_usd=0.0)
    base.update(kw)
    return RequestRecord(**base)


def rows(path: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM requests ORDER BY id").fetchall()
    finally:
        conn.close()


def test_rows_written_in_batches_and_flushed_on_close(tmp_path):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, prices=PriceTable.load(), batch_size=7)
        for i in range(20):
            r = record(i)
            r.chain = ["0011223344556677", "ffeeddccbbaa9988"]
            ledger.handle(r)
        await ledger.aclose()
        return ledger

    ledger = asyncio.run(main())
    got = rows(path)
    assert len(got) == 20 and ledger.written == 20 and ledger.failures == 0
    first = got[0]
    assert first["request_id"] == "r0" and first["model"] == "gpt-4o-mini"
    assert first["input_tokens"] == 2006 and first["cached_tokens"] == 1920 and first["output_tokens"] == 300
    assert first["latency_ms"] == pytest.approx(12.0) and first["ttfb_ms"] == pytest.approx(4.0)
    assert first["chain"] == "0011223344556677,ffeeddccbbaa9988"
    assert first["body"] is None
    assert json.loads(first["rewrites"]) == []
    parts = first["cost_input_usd"] + first["cost_cache_read_usd"] + first["cost_cache_write_usd"] + first["cost_output_usd"]
    assert abs(parts - first["cost_usd"]) < 1e-12
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unpriced_and_failed_requests_keep_nulls(tmp_path):
    path = str(tmp_path / "l.sqlite")

    async def main():
        ledger = Ledger(path, prices=PriceTable.load())
        ledger.handle(record(1, model="mystery", cost_usd=None, saved_usd=None, missed_usd=None))
        ledger.handle(record(2, status=502, usage=None, cost_usd=None, saved_usd=None, missed_usd=None, error="upstream_unreachable", ttfb_s=None))
        assert await ledger.flush()
        await ledger.aclose()

    asyncio.run(main())
    a, b = rows(path)
    assert a["cost_usd"] is None and a["input_tokens"] == 2006 and a["cost_input_usd"] is None
    assert b["input_tokens"] is None and b["ttfb_ms"] is None and b["error"] == "upstream_unreachable"


def test_bodies_only_with_log_bodies(tmp_path):
    async def main(path, log_bodies):
        ledger = Ledger(path, log_bodies=log_bodies)
        ledger.handle(record(1, body=b'{"messages":[]}'))
        await ledger.aclose()

    asyncio.run(main(str(tmp_path / "a.sqlite"), False))
    asyncio.run(main(str(tmp_path / "b.sqlite"), True))
    assert rows(str(tmp_path / "a.sqlite"))[0]["body"] is None
    assert rows(str(tmp_path / "b.sqlite"))[0]["body"] == b'{"messages":[]}'


def test_corrupt_ledger_is_a_clear_error_at_start(tmp_path):
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(b"this is not a sqlite database at all\n" * 200)
    with pytest.raises(LedgerError) as err:
        Ledger(str(path))
    assert str(path) in str(err.value) and "not a database" in str(err.value)
    assert path.read_bytes().startswith(b"this is not")  # nothing overwritten


def test_locked_ledger_is_a_clear_error_at_start(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    open_ledger(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError, match="locked"):
            Ledger(path, busy_timeout_s=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_runtime_lock_counts_failures_and_loses_nothing(tmp_path):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, busy_timeout_s=0.05, flush_interval_s=0.05)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        for i in range(5):
            ledger.handle(record(i))
        assert await ledger.flush() is False  # written nowhere yet, still queued
        assert ledger.failures >= 1 and ledger.written == 0
        holder.execute("ROLLBACK")
        holder.close()
        for _ in range(50):
            if await ledger.flush():
                break
        await ledger.aclose()
        return ledger

    ledger = asyncio.run(main())
    assert ledger.written == 5 and ledger.dropped == 0
    assert [r["request_id"] for r in rows(path)] == [f"r{i}" for i in range(5)]


def test_queue_bound_drops_and_counts(tmp_path):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, max_pending=3, busy_timeout_s=0.05)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        for i in range(10):
            ledger.handle(record(i))
        await ledger.flush(timeout_s=2)
        holder.execute("ROLLBACK")
        holder.close()
        await ledger.aclose()
        return ledger

    ledger = asyncio.run(main())
    assert ledger.dropped > 0
    assert ledger.written + ledger.dropped == 10


def test_older_ledger_gains_new_columns(tmp_path):
    path = str(tmp_path / "old.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE requests (id INTEGER PRIMARY KEY, request_id TEXT, ts REAL)")
    conn.commit()
    conn.close()
    open_ledger(path).close()
    have = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(requests)")}
    assert set(COLUMNS) <= have


def test_read_sees_everything_handled_before_it(tmp_path):
    async def main(path):
        ledger = Ledger(path)
        for i in range(30):
            ledger.handle(record(i))
        count = await ledger.read(lambda conn: conn.execute("SELECT COUNT(*) FROM requests").fetchone()[0])
        with pytest.raises(sqlite3.OperationalError):
            await ledger.read(lambda conn: conn.execute("SELECT nope FROM requests").fetchone())
        await ledger.aclose()
        return count

    assert asyncio.run(main(":memory:")) == 30  # read on the writer's own connection
    assert asyncio.run(main(str(tmp_path / "l.sqlite"))) == 30  # a read-only connection beside it


def test_rows_handled_on_the_loop_reach_the_writer_as_one_list(tmp_path):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, handoff_interval_s=0.05, handoff_size=1000)
        for i in range(5):
            ledger.handle(record(i))
        handed_at_once = ledger._queue.qsize()
        await asyncio.sleep(0.2)  # the timer hands the inbox over
        count = await ledger.read(lambda conn: conn.execute("SELECT COUNT(*) FROM requests").fetchone()[0])
        ledger.handle(record(5))  # still in the inbox when the ledger closes: written, not lost
        await ledger.aclose()
        return handed_at_once, count, ledger

    handed_at_once, count, ledger = asyncio.run(main())
    assert handed_at_once == 0 and count == 5
    assert ledger.written == 6 and ledger.dropped == 0
    assert [r["request_id"] for r in rows(path)] == [f"r{i}" for i in range(6)]


def test_a_full_inbox_is_handed_over_without_waiting_for_the_timer(tmp_path):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, handoff_interval_s=60.0, handoff_size=4)
        for i in range(9):
            ledger.handle(record(i))
        lists, inbox = ledger._queue.qsize(), len(ledger._inbox)
        await ledger.aclose()
        return lists, inbox, ledger

    lists, inbox, ledger = asyncio.run(main())
    assert lists <= 2 and inbox == 1  # two lists of four went over; one row waits
    assert ledger.written == 9
