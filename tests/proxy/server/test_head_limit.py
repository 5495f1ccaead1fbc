"""proxy.server.head_limit: request heads over the limit get 431 and a closed connection, in both
of uvicorn's HTTP/1.1 implementations, before the app (or the upstream) sees a byte."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import pytest
import uvicorn

from proxy.server.head_limit import HeadLimitedH11, HeadLimitedHttpTools, head_limited
from tests.support.proxy_process import proxy_process
from tests.support.rawserver import SilentServer
from tests.support.servers import free_port

LIMIT = 8 * 1024
IMPLEMENTATIONS = ["httptools", "h11"]


class CountingApp:
    """Answers 200 "ok" to every request and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        self.calls += 1
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def limited_server(app, http: str):
    port = free_port()
    config = uvicorn.Config(
        app,
        port=port,
        http=head_limited(http),
        h11_max_incomplete_event_size=LIMIT,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def exchange(
    port: int, pieces: list[bytes], pause_s: float = 0.0, oks: int | None = None
) -> tuple[bytes, int]:
    """Sends ``pieces`` (stopping when the server closes) while reading; returns everything
    read until the server closed (or ``oks`` 200 answers came), and how many bytes could be sent."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    sent = 0

    def sender():
        nonlocal sent
        try:
            for piece in pieces:
                sock.sendall(piece)
                sent += len(piece)
                if pause_s:
                    time.sleep(pause_s)
        except OSError:
            pass

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
            if oks is not None and received.count(b"HTTP/1.1 200 OK") == oks and received.endswith(b"ok"):
                break
    except (TimeoutError, ConnectionResetError):
        pass
    thread.join(10)
    sock.close()
    return received, sent


def huge_head(size: int, piece: int = 64 * 1024) -> list[bytes]:
    head = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
    return [head[i : i + piece] for i in range(0, len(head), piece)]


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_head_over_the_limit_arriving_in_pieces_is_431_and_closed(http):
    app = CountingApp()
    with limited_server(app, http) as port:
        received, sent = exchange(port, huge_head(4 * 1024 * 1024), pause_s=0.005)
    assert received.startswith(b"HTTP/1.1 431 "), received[:200]
    assert b"connection: close" in received and b"x-prefixgate-error: header_too_large" in received
    assert sent < 2 * 1024 * 1024, "the server kept reading a head far over the limit"
    assert app.calls == 0


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_complete_head_just_over_the_limit_in_one_write_is_431(http):
    app = CountingApp()
    with limited_server(app, http) as port:
        received, _ = exchange(port, [b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * LIMIT + b"\r\n\r\n"])
    assert received.startswith(b"HTTP/1.1 431 "), received[:200]
    assert app.calls == 0


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_heads_under_the_limit_pass_and_keep_alive_works(http):
    app = CountingApp()
    near = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (LIMIT - 200) + b"\r\n\r\n"
    with limited_server(app, http) as port:
        received, _ = exchange(port, [near + b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"], oks=2)
    assert received.count(b"HTTP/1.1 200 OK") == 2, received[:300]
    assert app.calls == 2


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_body_bytes_never_count_as_head(http):
    app = CountingApp()
    body = b"x" * (8 * LIMIT)
    request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    with limited_server(app, http) as port:
        received, _ = exchange(port, [request[i : i + 3000] for i in range(0, len(request), 3000)], oks=1)
    assert received.startswith(b"HTTP/1.1 200"), received[:200]


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_a_second_request_with_a_huge_head_on_a_kept_alive_connection_is_refused(http):
    app = CountingApp()
    with limited_server(app, http) as port:
        received, _ = exchange(
            port, [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", *huge_head(LIMIT * 4, piece=4096)], pause_s=0.01
        )
    assert received.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 431 " in received, received[:300]
    assert app.calls == 1


def test_head_limited_picks_the_class():
    assert head_limited("h11") is HeadLimitedH11
    assert head_limited("httptools") is HeadLimitedHttpTools
    assert head_limited("auto") is HeadLimitedHttpTools  # httptools is installed here
    with pytest.raises(ValueError):
        head_limited("h2")


@pytest.mark.e2e
@pytest.mark.parametrize("server", ["auto", "asyncio"])
def test_prefixgate_serve_refuses_a_huge_head_fast_with_bounded_memory(tmp_path, server):
    upstream = SilentServer(hold=False)  # the proxy must never open a connection here
    env = {"PREFIXGATE_SERVER": server} if server == "asyncio" else {}
    with proxy_process(tmp_path, upstream.url, "--max-header-size", "64KiB", env=env) as proxy:
        port = int(proxy.base.rsplit(":", 1)[1])
        before = proxy.rss_bytes()
        started = time.monotonic()
        received, _ = exchange(port, huge_head(1024 * 1024))
        elapsed = time.monotonic() - started
        # 64 MiB offered as fast as the socket takes it: refused long before the end
        flood, sent = exchange(port, huge_head(64 * 1024 * 1024, piece=256 * 1024))
        grown = proxy.rss_bytes() - before
    assert received.startswith(b"HTTP/1.1 431 "), received[:200]
    assert elapsed < 2.0
    assert flood.startswith(b"HTTP/1.1 431 ") or flood == b"", flood[:200]  # a reset may beat the reply
    assert sent < 16 * 1024 * 1024, f"sent {sent} bytes before the proxy closed"
    assert grown < 16 * 1024 * 1024, f"the proxy grew by {grown} bytes"
    assert upstream.connections == 0
    upstream.sock.close()


async def slow_app(scope, receive, send):
    """20 bytes of body, the second half after 0.3 s."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"20")]})
    await send({"type": "http.response.body", "body": b"A" * 10, "more_body": True})
    await asyncio.sleep(0.3)
    await send({"type": "http.response.body", "body": b"B" * 10})


@pytest.mark.parametrize("http", IMPLEMENTATIONS)
def test_a_pipelined_oversized_head_is_refused_after_the_response_before_it(http):
    with limited_server(slow_app, http) as port:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.settimeout(5)
        sock.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.1)
        sock.sendall(b"GET /b HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (LIMIT * 2))
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        sock.close()
    first, _, rest = data.partition(b"A" * 10 + b"B" * 10)
    assert first.startswith(b"HTTP/1.1 200 ") and rest.startswith(b"HTTP/1.1 431 "), data
