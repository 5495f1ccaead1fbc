"""proxy.server.watchdog and proxy.server.stacks: a stop that overruns ends at its deadline, after
the books closed, saying where it was; and the process-level cases no graceful path can end (a
loop blocked in a synchronous call, a start-up stuck on a dependency)."""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import sys
import textwrap
import threading
import time

import httpx
import pytest

from proxy.server.stacks import everywhere, task_stack
from proxy.server.watchdog import BOOKS_S, HARD_S, Watchdog
from tests.support.servers import free_port


def make(books=None):
    exited = threading.Event()
    codes: list[int] = []

    def exit(code: int) -> None:
        codes.append(code)
        exited.set()

    return Watchdog(books, exit=exit), exited, codes


def test_armed_it_closes_the_books_then_exits_with_128_plus_the_signal(caplog):
    closed: list[float] = []
    dog, exited, codes = make(lambda timeout_s: closed.append(timeout_s) or True)
    dog.start()
    with caplog.at_level(logging.ERROR, "prefixgate.shutdown"):
        started = time.monotonic()
        dog.arm(0.2, 128 + signal.SIGTERM, "SIGTERM")
        assert exited.wait(5)
    assert 0.15 < time.monotonic() - started < 2
    assert codes == [143] and closed == [BOOKS_S] and dog.fired
    assert "still running past its limit (SIGTERM)" in caplog.text and "thread MainThread:" in caplog.text


def test_only_the_first_arm_counts_and_arming_before_start_is_kept():
    dog, exited, codes = make()
    dog.arm(0.1, 130, "SIGINT")
    dog.arm(60, 143, "SIGTERM")
    dog.start()
    assert exited.wait(5) and codes == [130]


def test_stood_down_or_never_armed_it_never_fires():
    for arm in (False, True):
        dog, exited, _ = make()
        dog.start()
        if arm:
            dog.arm(0.1, 143, "SIGTERM")
        dog.stand_down()
        assert not exited.wait(0.4)


def test_books_that_fail_do_not_keep_the_process_alive(caplog):
    def books(timeout_s):
        raise OSError("disk gone")

    dog, exited, codes = make(books)
    dog.start()
    dog.arm(0.05, 143, "SIGTERM")
    assert exited.wait(5) and codes == [143]


def test_a_log_that_blocks_does_not_keep_the_process_alive():
    """A full stderr pipe, or a handler lock the stuck main thread holds: the line is given
    SAY_S, then the books close and the process ends anyway."""
    release = threading.Event()

    class Stuck(logging.Handler):
        def emit(self, record):
            release.wait(30)

    stuck = Stuck()
    logger = logging.getLogger("prefixgate.shutdown")
    logger.addHandler(stuck)
    closed = []
    try:
        dog, exited, codes = make(lambda timeout_s: closed.append(timeout_s) or True)
        dog.start()
        dog.arm(0.05, 143, "SIGTERM")
        assert exited.wait(2) and codes == [143] and closed == [BOOKS_S]
    finally:
        release.set()
        logger.removeHandler(stuck)


def test_task_stack_follows_the_await_chain():
    async def innermost():
        await asyncio.Event().wait()

    async def middle():
        await innermost()

    async def main():
        task = asyncio.ensure_future(middle())
        await asyncio.sleep(0.01)
        chain, every = task_stack(task), everywhere(asyncio.get_running_loop())
        task.cancel()
        return chain, every

    chain, every = asyncio.run(main())
    assert "middle > " in chain and "innermost > " in chain and "locks.py" in chain and chain.endswith(">")
    assert "task " in every and "innermost" in every


# -- real processes: what no graceful path can end ----------------------------------------------

SCRIPT = textwrap.dedent("""
    import asyncio, pathlib, sys, time
    import uvicorn
    from proxy.server.shutdown import serve

    marker = pathlib.Path(sys.argv[2])

    class Books:
        async def aclose(self, timeout_s):
            marker.write_text("closed in the loop")
            return True

        def close_from_thread(self, timeout_s):
            marker.write_text("closed by the watchdog")
            return True

    def block_the_loop():
        time.sleep(60)  # a synchronous call that never returns in time

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    if sys.argv[3] == "startup":
                        await asyncio.Event().wait()  # a start-up stuck on a dependency
                    await send({"type": "lifespan.startup.complete"})
                else:
                    block_the_loop()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"up"})

    config = uvicorn.Config(app, port=int(sys.argv[1]), lifespan="on", log_level="info", timeout_graceful_shutdown=1.0)
    serve(config, books=Books())
""")


@pytest.mark.parametrize("stuck", ["shutdown", "startup"])
def test_a_process_whose_stop_is_stuck_ends_at_the_deadline_after_the_books(tmp_path, stuck):
    script, marker, port = tmp_path / "stuck.py", tmp_path / "books", free_port()
    script.write_text(SCRIPT)
    log = tmp_path / "log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(port), str(marker), stuck], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 20
        while (
            "Waiting for application startup" not in log.read_text()
            if stuck == "startup"
            else not _answers(port)
        ):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        time.sleep(0.1)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert rc == 128 + signal.SIGTERM, text
    assert 1.0 + HARD_S - 0.2 < took < 1.0 + HARD_S + BOOKS_S + 1.0, text
    assert "still running past its limit (SIGTERM, then --shutdown-timeout 1s + 3s)" in text
    assert ("block_the_loop" if stuck == "shutdown" else "lifespan/on.py") in text  # where it was stuck
    assert marker.read_text() == "closed by the watchdog"


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
