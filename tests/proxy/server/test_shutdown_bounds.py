"""proxy.server.shutdown in process: the server's own bounds on the app's shutdown, and the books
closed last whatever happened to the app's lifespan (stuck, or dead before the stop)."""

from __future__ import annotations

import asyncio
import logging
import time

import uvicorn

from proxy.server import shutdown
from proxy.server.shutdown import ProxyServer
from tests.support.servers import free_port


class Books:
    def __init__(self) -> None:
        self.closes: list[float] = []

    async def aclose(self, timeout_s: float) -> bool:
        self.closes.append(timeout_s)
        return True

    def close_from_thread(self, timeout_s: float) -> bool:
        raise AssertionError("the watchdog is stood down in these tests")


def lifespan_app(on_shutdown):
    async def app(scope, receive, send):
        assert scope["type"] == "lifespan"
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await on_shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    return app


LEFT: list[asyncio.Task] = []  # tasks still running once the server's serve() returned (the last run)


def run(app, lifespan: str = "on", wait_s: float = 0.0) -> tuple[float, Books]:
    books = Books()
    config = uvicorn.Config(
        app, port=free_port(), lifespan=lifespan, log_level="warning", timeout_graceful_shutdown=0.2
    )
    server = ProxyServer(config, books)
    server.watchdog.stand_down()

    async def main() -> float:
        serving = asyncio.ensure_future(server.serve())
        while not server.started:
            assert not serving.done(), serving
            await asyncio.sleep(0.01)
        await asyncio.sleep(wait_s)
        started = time.monotonic()
        server.should_exit = True
        await asyncio.wait_for(serving, 20)
        took = time.monotonic() - started
        LEFT[:] = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        return took

    return asyncio.run(main()), books


def test_an_app_shutdown_that_never_ends_is_left_behind_and_the_books_close(caplog):
    async def hang():
        await asyncio.Event().wait()

    with caplog.at_level(logging.WARNING, "prefixgate.shutdown"):
        took, books = run(lifespan_app(hang))
    assert (
        shutdown.LIFESPAN_S < took < 0.2 + shutdown.CUT_GRACE_S + shutdown.LIFESPAN_S + shutdown.BOOKS_S + 1.0
    )
    fixed = shutdown.CUT_GRACE_S + shutdown.LISTENERS_S + shutdown.LIFESPAN_S + shutdown.BOOKS_S
    assert (
        len(books.closes) == 1 and shutdown.BOOKS_S <= books.closes[0] <= fixed - shutdown.LIFESPAN_S
    )  # what was left
    assert (
        "the app's shutdown did not finish within 1.5 s" in caplog.text and "hang" in caplog.text
    )  # where it was stuck


def test_a_quick_app_shutdown_is_waited_for_and_the_books_close_after_it():
    order: list[str] = []

    async def close():
        await asyncio.sleep(0.05)
        order.append("app")

    took, books = run(lifespan_app(close))
    assert took < 1.0 and order == ["app"] and len(books.closes) == 1


def test_the_books_close_even_when_the_app_lifespan_died_before_the_stop():
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await asyncio.sleep(0.05)
            raise RuntimeError("the lifespan task died")  # uvicorn then skips the app's shutdown

    took, books = run(app, wait_s=0.2)
    fixed = shutdown.CUT_GRACE_S + shutdown.LISTENERS_S + shutdown.LIFESPAN_S + shutdown.BOOKS_S
    assert (
        took < 1.0 and len(books.closes) == 1 and books.closes[0] > fixed - 0.5
    )  # the time the app did not use


def test_tasks_left_running_are_cancelled_so_asyncio_run_has_none_to_wait_for():
    leftovers: list[asyncio.Task] = []

    async def close():
        leftovers.append(asyncio.get_running_loop().create_task(asyncio.Event().wait()))

    run(lifespan_app(close))
    assert leftovers and LEFT == []  # cancelled by the server itself, not by asyncio.run's unbounded clean-up
