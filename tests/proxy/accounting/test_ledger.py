from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest

from analyzer.cost import Breakdown, cost_of
from analyzer.pricing import PriceTable
from analyzer.usage import Usage
from proxy.accounting.ledger import COLUMNS, Ledger, LedgerError, open_ledger, row_for
from proxy.accounting.ledger_schema import SCHEMA
from proxy.accounting.records import RequestRecord

USAGE = Usage(2006, 1920, 0, 0, 300)
COST = cost_of(USAGE, PriceTable.load().lookup("gpt-4o-mini"))  # what the money layer puts on the record


def record(i: int, **kw) -> RequestRecord:
    base = dict(
        request_id=f"r{i}",
        ts=1_700_000_000.0 + i,
        tenant="t" * 16,
        provider="openai",
        route="/v1/chat/completions",
        model="gpt-4o-mini",
        status=200,
        latency_s=0.012,
        ttfb_s=0.004,
        analysed=True,
        usage=USAGE,
        prefix_segments=1,
        prefix_bytes=7000,
        total_segments=2,
        total_bytes=7100,
        cost_usd=0.0003369,
        saved_usd=0.000144,
        missed_usd=0.0,
        cost_breakdown=COST.parts,
    )
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
        ledger = Ledger(path, batch_size=7)
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
    parts = (
        first["cost_input_usd"]
        + first["cost_cache_read_usd"]
        + first["cost_cache_write_usd"]
        + first["cost_output_usd"]
    )
    assert abs(parts - first["cost_usd"]) < 1e-12
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unpriced_and_failed_requests_keep_nulls(tmp_path):
    path = str(tmp_path / "l.sqlite")

    async def main():
        ledger = Ledger(path)
        ledger.handle(
            record(1, model="mystery", cost_usd=None, saved_usd=None, missed_usd=None, cost_breakdown=None)
        )
        ledger.handle(
            record(
                2,
                status=502,
                usage=None,
                cost_usd=None,
                saved_usd=None,
                missed_usd=None,
                cost_breakdown=None,
                error="upstream_unreachable",
                ttfb_s=None,
            )
        )
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
        handed_at_once = ledger._writer.queue.qsize()
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
        lists, inbox = ledger._writer.queue.qsize(), len(ledger._inbox)
        await ledger.aclose()
        return lists, inbox, ledger

    lists, inbox, ledger = asyncio.run(main())
    assert lists <= 2 and inbox == 1  # two lists of four went over; one row waits
    assert ledger.written == 9


# -- values it cannot store, writer errors, health ---------------------------------

ABSURD = 9223372036854775808  # one past SQLite's signed 64-bit INTEGER


def test_an_absurd_usage_number_is_clamped_flagged_and_the_next_row_written(tmp_path):
    from analyzer.usage import MAX_TOKENS, from_openai_chat

    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path)
        absurd = from_openai_chat({"prompt_tokens": 10, "completion_tokens": ABSURD})
        ledger.handle(
            record(1, usage=absurd, cost_usd=None, saved_usd=None, missed_usd=None, cost_breakdown=None)
        )
        ledger.handle(record(2))
        assert await ledger.flush()
        health = ledger.health()
        await ledger.aclose()
        return ledger, health

    ledger, health = asyncio.run(main())
    a, b = rows(path)
    assert a["output_tokens"] == MAX_TOKENS and a["flags"] == "usage.completion_tokens:too_large"
    assert b["request_id"] == "r2" and b["flags"] is None and b["output_tokens"] == 300
    assert (ledger.written, ledger.failures, ledger.dropped, ledger.flagged) == (2, 0, 0, 1)
    assert health["ok"] and health["writer_alive"] and health["flagged"] == 1


def test_a_value_sqlite_cannot_take_is_nulled_and_flagged_and_its_batch_still_lands(tmp_path):
    """Past the usage parser (a Usage built by hand): the batch fails with OverflowError, is
    written row by row, and the bad row is stored repaired rather than blocking the rest."""
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, batch_size=100)
        ledger.handle(record(0))
        ledger.handle(
            record(1, usage=Usage(10, 0, 0, 0, ABSURD), prefix_bytes=-(2**70), model="bad\ud800name")
        )
        ledger.handle(record(2))
        assert await ledger.flush()
        ledger.handle(record(3))  # the writer is alive and writes in batches again
        assert await ledger.flush()
        health = ledger.health()
        await ledger.aclose()
        return ledger, health

    ledger, health = asyncio.run(main())
    got = rows(path)
    assert [r["request_id"] for r in got] == ["r0", "r1", "r2", "r3"]
    bad = got[1]
    assert bad["output_tokens"] is None and bad["prefix_bytes"] is None and bad["model"] == "bad?name"
    assert bad["input_tokens"] == 10  # the cells it could store are kept
    assert set(bad["flags"].split(",")) == {
        "output_tokens:out_of_range",
        "prefix_bytes:out_of_range",
        "model:bad_text",
    }
    assert [r["flags"] for r in got if r["request_id"] != "r1"] == [None, None, None]
    assert ledger.written == 4 and ledger.failures == 1 and ledger.dropped == 0 and ledger.flagged == 1
    assert health["writer_alive"] and not health["ok"]  # a failure in the last minute


class _Breaking:
    """The writer's connection, with ``executemany`` (and ``execute`` for chosen rows) raising."""

    def __init__(self, conn, exc, bad_ids=()):
        self.conn, self.exc, self.bad_ids = conn, exc, set(bad_ids)

    def executemany(self, sql, rows):
        raise self.exc("boom")

    def execute(self, sql, params=()):
        if params and params[0] in self.bad_ids:
            raise self.exc("boom")
        return self.conn.execute(sql, params)

    def __enter__(self):
        return self.conn.__enter__()

    def __exit__(self, *exc):
        return self.conn.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self.conn, name)


@pytest.mark.parametrize("exc", [OverflowError, ValueError, RuntimeError])
def test_a_writer_error_of_any_type_is_counted_and_the_writer_keeps_writing(tmp_path, exc):
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, batch_size=4)
        ledger._writer.conn = _Breaking(ledger._writer.conn, exc, bad_ids={"r2"})
        for i in range(6):
            ledger.handle(record(i))
        await ledger.flush()
        ledger._writer.conn = ledger._writer.conn.conn  # healthy again
        ledger.handle(record(6))
        assert await ledger.flush()
        health = ledger.health()
        await ledger.aclose()
        return ledger, health

    ledger, health = asyncio.run(main())
    assert [r["request_id"] for r in rows(path)] == ["r0", "r1", "r3", "r4", "r5", "r6"]  # only r2 lost
    assert ledger.failures == 2  # the two batches that raised
    assert ledger.unwritable == 1 and ledger.dropped == 1 and ledger.written == 6
    assert health["writer_alive"] and not health["ok"] and health["unwritable"] == 1


def test_a_busy_database_during_row_by_row_keeps_the_rest_queued(tmp_path):
    """A row that fails because the database is locked is not unwritable: kept, retried."""
    path = str(tmp_path / "ledger.sqlite")

    async def main():
        ledger = Ledger(path, busy_timeout_s=0.05, flush_interval_s=0.05)
        ledger._writer.conn = _Breaking(ledger._writer.conn, sqlite3.OperationalError, bad_ids={"r1"})
        ledger._writer.conn.executemany = lambda sql, rows: (_ for _ in ()).throw(ValueError("boom"))
        for i in range(3):
            ledger.handle(record(i))
        assert await ledger.flush() is False  # r0 written; r1 and r2 wait
        ledger._writer.conn = ledger._writer.conn.conn
        for _ in range(50):
            if await ledger.flush():
                break
        await ledger.aclose()
        return ledger

    ledger = asyncio.run(main())
    assert [r["request_id"] for r in rows(path)] == ["r0", "r1", "r2"]
    assert ledger.dropped == 0 and ledger.unwritable == 0 and ledger.written == 3


def test_health_clears_after_the_trouble_window_and_tells_a_dead_writer(tmp_path):
    async def main():
        ledger = Ledger(str(tmp_path / "l.sqlite"), trouble_window_s=0.05)
        ledger._writer.conn = _Breaking(ledger._writer.conn, OverflowError)
        ledger.handle(record(1))
        await ledger.flush()
        ledger._writer.conn = ledger._writer.conn.conn
        troubled = ledger.health()
        await asyncio.sleep(0.1)
        clear = ledger.health()
        await ledger.aclose()
        return troubled, clear, ledger.health()

    troubled, clear, closed = asyncio.run(main())
    assert not troubled["ok"] and troubled["failures"] == 1 and troubled["written"] == 1
    assert clear["ok"] and clear["writer_alive"]
    assert not closed["ok"] and not closed["writer_alive"]


def test_a_v1_ledger_without_flags_stays_readable_and_gains_the_column(tmp_path):
    from proxy.reporting.summary import summarize

    path = str(tmp_path / "v1.sqlite")
    old = [c for c in COLUMNS if c != "flags"]
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE requests (id INTEGER PRIMARY KEY, {', '.join(old)})")
    conn.execute(
        "INSERT INTO requests (request_id, ts, provider, input_tokens) VALUES ('old', 1.0, 'openai', 5)"
    )
    conn.commit()
    conn.close()

    async def main():
        ledger = Ledger(path)
        ledger.handle(record(1, usage=Usage(1, 0, 0, 0, 1, flags=("usage.output_tokens:negative",))))
        await ledger.aclose()

    asyncio.run(main())
    got = rows(path)
    assert [(r["request_id"], r["flags"]) for r in got] == [
        ("old", None),
        ("r1", "usage.output_tokens:negative"),
    ]
    assert summarize(sqlite3.connect(path))["requests"] == 2


# -- permissions -------------------------------------------------------------------------------


def _mode(path) -> int:
    import os

    return os.stat(path).st_mode & 0o777


@pytest.fixture
def loose_umask():
    import os

    old = os.umask(0o022)  # what most shells have: files 0644, folders 0755 unless told otherwise
    yield
    os.umask(old)


def test_a_ledger_it_creates_is_0600_with_its_wal_and_shm_in_a_0700_folder(tmp_path, loose_umask):
    folder = tmp_path / "new" / "state"
    path = folder / "ledger.sqlite"

    async def main():
        ledger = Ledger(str(path))
        ledger.handle(record(1))
        assert await ledger.flush()
        modes = {
            suffix: _mode(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")
        }  # while open: WAL in use
        await ledger.aclose()
        return modes

    assert asyncio.run(main()) == {"": 0o600, "-wal": 0o600, "-shm": 0o600}
    assert _mode(folder) == 0o700


def test_an_existing_folder_or_ledger_keeps_the_mode_its_user_gave_it(tmp_path, loose_umask):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o750)
    open_ledger(str(shared / "new.sqlite")).close()
    existing = shared / "old.sqlite"
    sqlite3.connect(existing).close()
    existing.chmod(0o640)
    open_ledger(str(existing)).close()
    assert _mode(shared) == 0o750 and _mode(shared / "new.sqlite") == 0o600 and _mode(existing) == 0o640


def test_a_column_an_older_ledger_gains_has_its_declared_type(tmp_path):
    # Before: added columns were TEXT unless named *_usd/*_ms, so an integer stored in, say,
    # cache_write_1h_tokens came back as the string '400'.
    from analyzer.logs.ledger_columns import COLUMN_TYPES

    path = str(tmp_path / "old.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE requests (id INTEGER PRIMARY KEY, request_id TEXT, ts REAL)")
    conn.commit()
    conn.close()

    async def main():
        ledger = Ledger(path)
        ledger.handle(record(1, usage=Usage(2006, 0, 800, 400, 300)))
        await ledger.aclose()

    asyncio.run(main())
    conn = sqlite3.connect(path)
    assert {r[1]: r[2] for r in conn.execute("PRAGMA table_info(requests)") if r[1] != "id"} == dict(
        COLUMN_TYPES
    )
    assert conn.execute("SELECT cache_write_1h_tokens, status FROM requests").fetchone() == (400, 200)


def test_the_schema_is_the_columns_the_analyzer_reads():
    from analyzer.logs import ledger_columns

    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    assert COLUMNS is ledger_columns.COLUMNS
    assert [(r[1], r[2]) for r in conn.execute("PRAGMA table_info(requests)")] == [
        ("id", "INTEGER"),
        *ledger_columns.COLUMN_TYPES,
    ]


def test_the_row_stores_the_breakdown_the_record_carries_and_prices_nothing(tmp_path):
    parts = Breakdown(
        0.25, 0.125, 0.0625, 0.5
    )  # not what any price gives: the ledger copies, never recomputes
    row = dict(zip(COLUMNS, row_for(record(1, cost_usd=0.9375, cost_breakdown=parts), log_bodies=False)))
    assert (
        row["cost_input_usd"],
        row["cost_cache_read_usd"],
        row["cost_cache_write_usd"],
        row["cost_output_usd"],
    ) == (0.25, 0.125, 0.0625, 0.5)
    row = dict(zip(COLUMNS, row_for(record(2, cost_usd=0.001, cost_breakdown=None), log_bodies=False)))
    assert (
        row["cost_usd"] == 0.001 and row["cost_input_usd"] is None
    )  # no breakdown on the record: none invented
    assert row["rewrites"] == "[]"
    assert (
        dict(zip(COLUMNS, row_for(record(3, rewrites=["a", "b"]), log_bodies=False)))["rewrites"]
        == '["a", "b"]'
    )


def test_a_v3_ledger_without_store_stays_readable_gains_the_column_and_rows_say_the_store(tmp_path):
    from proxy.accounting.records import STORE_STATES
    from proxy.reporting.report import load_summary

    path = str(tmp_path / "v3.sqlite")
    old = [c for c in COLUMNS if c != "store"]
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE requests (id INTEGER PRIMARY KEY, {', '.join(old)})")
    conn.execute(
        "INSERT INTO requests (request_id, ts, provider, status, input_tokens) VALUES ('old', 1.0, 'openai', 200, 5)"
    )
    conn.commit()
    conn.close()
    assert load_summary([path], None)["requests"] == 1  # `prefixgate report` reads it as it is (read-only)
    other = str(tmp_path / "other.sqlite")  # and beside a newer ledger
    open_ledger(other).close()
    assert load_summary([path, other], None)["requests"] == 1

    async def main():
        ledger = Ledger(path)
        for i, state in enumerate(STORE_STATES):
            ledger.handle(record(i, store=state))
        await ledger.aclose()

    asyncio.run(main())
    got = [(r["request_id"], r["store"]) for r in rows(path)]
    assert got == [("old", None), *((f"r{i}", s) for i, s in enumerate(STORE_STATES))]
    assert STORE_STATES == ("ok", "unavailable", "skipped", "none", "cancelled")
    assert (
        RequestRecord("x", 0.0, "t", "openai", "/v1/chat/completions").store == "none"
    )  # no look-up until the handler makes one
