"""Real servers on loopback for tests: uvicorn in a background thread, on a free port."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn

_HANDED: set[int] = set()
_HANDED_LOCK = threading.Lock()


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A free loopback port for a server that binds it later (a subprocess's ``--port``).

    Picked below the kernel's ephemeral range, never twice in one run: a listener that binds port 0
    meanwhile (a fake upstream of a test running beside) gets an ephemeral port, so it can never take
    this one between the pick and the server's own bind (which once let a test talk to another
    test's upstream instead of its proxy)."""
    top = _ephemeral_start()
    with _HANDED_LOCK:
        for _ in range(200):
            port = random.randrange(max(1024, top - 12000), top)
            if port in _HANDED:
                continue
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _HANDED.add(port)
            return port
    with socket.socket() as s:  # the range is crowded: let the kernel choose
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(app, host: str = "127.0.0.1", port: int | None = None) -> Iterator[str]:
    """Run ``app`` under a real uvicorn until the block exits; yields ``http://host:port``."""
    port = port or free_port()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"uvicorn failed to start on {host}:{port}")
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start within 20 s")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
