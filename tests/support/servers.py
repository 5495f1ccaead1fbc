"""Real servers on loopback for tests: uvicorn in a background thread, on a free port."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn


def free_port() -> int:
    with socket.socket() as s:
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
