"""proxy.server.closing and the ledger's close paths it relies on: the app's close at shutdown ends
within its budget whatever a part does, cuts the auto-cache's background calls so they are
recorded, and the books always close with every row handed to them."""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
import threading
import time
from types import SimpleNamespace

import pytest

from proxy.accounting.ledger import Ledger
from proxy.accounting.recorder import Recorder
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from proxy.config import ProxyConfig
from proxy.gate import Gate
from proxy.gemini_cache.hook import AutoCacheHook
from proxy.server import closing
from proxy.server.closing import close_gate
from proxy.tenant import TenantHasher
from proxy.upstream_urls import Router


def record(i: int, **kw) -> RequestRecord:
    return RequestRecord(
        request_id=f"r{i}",
        ts=1_700_000_000.0 + i,
        tenant="t" * 16,
        provider="openai",
        route="/v1/chat/completions",
        method="POST",
        **kw,
    )


class HungStore:
    def ready(self, tenant=None) -> bool:
        return True

    async def aclose(self) -> None:
        await asyncio.Event().wait()  # a Redis that never answers, a close that ignores its budget


class FailingStore(HungStore):
    async def aclose(self) -> None:
        raise ConnectionError("gone")


class AutoCache:
    """The auto-cache's shape as close_gate sees it: background tasks that record themselves when cut."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.tasks: set[asyncio.Task] = set()

    def spawn(self, i: int) -> None:
        async def call():
            try:
                await asyncio.Event().wait()  # the upstream never answers
            except asyncio.CancelledError:
                self.recorder.emit(record(i, status=503, error="shutdown_cut"))
                raise

        task = asyncio.get_running_loop().create_task(call())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def aclose(self) -> None:
        await asyncio.wait(list(self.tasks), timeout=5)  # the real one waits up to 5 s


def make(store, tmp_path, *, auto: bool = False) -> tuple[Gate, Ledger]:
    config = ProxyConfig(state_dir=tmp_path)
    ledger = Ledger(str(tmp_path / "ledger.sqlite"))
    stats = Stats()
    recorder = Recorder([stats, ledger])
    gate = Gate(
        config=config,
        router=Router.for_config(config),
        tenants=TenantHasher.for_config(config),
        store=store,
        recorder=recorder,
        stats=stats,
        money=SimpleNamespace(ledger=ledger),
    )  # type: ignore[arg-type]
    if auto:
        gate.gemini_auto_cache = AutoCacheHook(AutoCache(recorder))  # type: ignore[arg-type]
    return gate, ledger


def rows(tmp_path) -> list[tuple]:
    conn = sqlite3.connect(tmp_path / "ledger.sqlite")
    try:
        return conn.execute("SELECT request_id, status, error FROM requests ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_hung_part_is_left_behind_within_the_budget_and_the_books_close(tmp_path, caplog):
    gate, ledger = make(HungStore(), tmp_path)

    async def main():
        for i in range(3):
            ledger.handle(record(i, status=200))
        started = time.monotonic()
        await close_gate(gate)
        return time.monotonic() - started

    with caplog.at_level(logging.WARNING, "prefixgate.shutdown"):
        took = asyncio.run(main())
    assert took < closing.PARTS_S + closing.CUT_S + closing.BOOKS_S + 0.3
    assert rows(tmp_path) == [("r0", 200, None), ("r1", 200, None), ("r2", 200, None)]
    assert not ledger.health()["writer_alive"]
    assert "closing the app took over 0.8 s" in caplog.text
    assert (
        "proxy/gate.py" in caplog.text and "test_closing.py" in caplog.text and "aclose" in caplog.text
    )  # where it was stuck


def test_the_auto_cache_calls_are_cut_and_recorded_before_the_books_close(tmp_path):
    gate, ledger = make(HungStore(), tmp_path, auto=True)

    async def main():
        for i in range(2):
            gate.gemini_auto_cache.manager.spawn(i)  # type: ignore[union-attr]
        await asyncio.sleep(0)
        await close_gate(gate)

    asyncio.run(main())
    assert sorted(rows(tmp_path)) == [("r0", 503, "shutdown_cut"), ("r1", 503, "shutdown_cut")]


def test_a_healthy_close_finishes_in_time_and_a_part_error_is_raised_after_the_books(tmp_path):
    gate, ledger = make(FailingStore(), tmp_path)

    async def main():
        ledger.handle(record(1, status=200))
        await close_gate(gate)

    with pytest.raises(ConnectionError):
        asyncio.run(main())
    assert rows(tmp_path) == [("r1", 200, None)]


# -- the ledger's close paths --------------------------------------------------------------------


def test_the_ledger_closes_even_when_the_default_executor_is_full(tmp_path):
    """A default executor full of calls stuck on a hung dependency (sync Redis clients) cannot
    delay the last rows: the close polls the writer instead of joining it in a worker."""
    ledger = Ledger(str(tmp_path / "ledger.sqlite"))
    release = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        stuck = [loop.run_in_executor(None, release.wait, 30) for _ in range(64)]
        ledger.handle(record(1, status=200))
        started = time.monotonic()
        assert await ledger.aclose(2.0)
        took = time.monotonic() - started
        release.set()
        await asyncio.gather(*stuck)
        return took

    assert asyncio.run(main()) < 1.0
    assert rows(tmp_path) == [("r1", 200, None)]


def test_a_close_that_runs_out_of_time_says_so_and_returns(tmp_path, caplog):
    ledger = Ledger(str(tmp_path / "ledger.sqlite"))
    blocker = sqlite3.connect(tmp_path / "ledger.sqlite", timeout=0)
    blocker.execute(
        "BEGIN IMMEDIATE"
    )  # another writer holds the database: the writer waits on its busy timeout

    async def main():
        ledger.handle(record(1, status=200))
        started = time.monotonic()
        done = await ledger.aclose(0.3)
        return done, time.monotonic() - started

    with caplog.at_level(logging.WARNING, "prefixgate.ledger"):
        done, took = asyncio.run(main())
    blocker.rollback()
    blocker.close()
    assert not done and took < 1.0
    assert "did not finish within 0.3 s at close" in caplog.text
    assert ledger.close_sync(10.0)  # once the database is free the row is written after all
    assert rows(tmp_path) == [("r1", 200, None)]


def test_a_row_handled_after_the_close_is_dropped_counted_and_logged(tmp_path, caplog):
    ledger = Ledger(str(tmp_path / "ledger.sqlite"))

    async def main():
        await ledger.aclose(5.0)
        ledger.handle(record(9, status=503, error="shutdown_cut"))

    with caplog.at_level(logging.WARNING, "prefixgate.ledger"):
        asyncio.run(main())
    assert ledger.dropped == 1 and "request r9 finished after the ledger closed" in caplog.text
    assert rows(tmp_path) == []


def test_the_watchdog_close_from_another_thread_writes_what_the_loop_handed(tmp_path):
    ledger = Ledger(str(tmp_path / "ledger.sqlite"), handoff_interval_s=60)  # rows stay in the loop's inbox

    async def main():
        for i in range(5):
            ledger.handle(record(i, status=200))
        done = []
        thread = threading.Thread(target=lambda: done.append(ledger.close_from_thread(5.0)))
        thread.start()
        thread.join()
        return done

    assert asyncio.run(main()) == [True]
    assert [r[0] for r in rows(tmp_path)] == ["r0", "r1", "r2", "r3", "r4"]


# -- an upstream connection killed while its peer does not read ----------------------------------


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_killed_connection_whose_peer_never_reads_is_gone_at_once(loop, caplog):
    """A request the upstream never read (a hung upstream, a cut stream): a plain close would
    keep the socket and its buffer until the peer reads them, which it never does."""
    import socket

    from proxy.transport.connection import Connection
    from tests.support.hung import HungListener

    async def main():
        with HungListener() as hung:
            _, conn = await asyncio.get_running_loop().create_connection(Connection, "127.0.0.1", hung.port)
            conn.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            conn.transport.write(b"x" * (16 << 20))  # far more than the kernel buffers take
            await asyncio.sleep(0.05)
            assert conn.transport.get_write_buffer_size() > 0
            conn.kill()
            deadline = time.monotonic() + 2
            while not conn.lost and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            lost, conn = conn.lost, None
            gc.collect()  # its write waiter, failed with no one waiting, is not logged as an error
            return lost

    with caplog.at_level(logging.ERROR, "asyncio"):
        if loop == "uvloop":
            import uvloop

            assert uvloop.run(main())
        else:
            assert asyncio.run(main())
    assert "never retrieved" not in caplog.text
