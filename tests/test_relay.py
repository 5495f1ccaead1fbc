"""proxy.relay: a client that leaves while the upstream is still thinking closes the upstream too.

The upstream here is a raw TCP server that reads the request and then waits, recording
whether the proxy hung up before it would have answered.
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from tests.servers import serve

pytestmark = pytest.mark.e2e


class SilentUpstream:
    """Accepts one connection, reads a request, waits up to ``wait_s`` for the peer to close."""

    def __init__(self, wait_s: float = 8.0):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.got_request = threading.Event()
        self.closed_by_peer = threading.Event()
        self.wait_s = wait_s
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            self.got_request.set()
            conn.settimeout(self.wait_s)
            try:
                while conn.recv(65536):
                    pass
                self.closed_by_peer.set()
            except socket.timeout:
                pass
        self.sock.close()


def test_client_leaving_before_the_answer_closes_the_upstream_request(state_dir):
    upstream = SilentUpstream()
    cfg = ProxyConfig(openai_base=f"{upstream.url}/v1", anthropic_base=upstream.url, state_dir=state_dir)
    with serve(create_app(cfg)) as proxy:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{proxy}/v1/chat/completions", json={"model": "m", "messages": []}, timeout=httpx.Timeout(5, read=0.5))
        assert upstream.got_request.is_set()
        assert upstream.closed_by_peer.wait(5), "the proxy kept the abandoned upstream request open"
        deadline = time.monotonic() + 5
        while httpx.get(f"{proxy}/prefixgate/stats").json()["errors"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        stats = httpx.get(f"{proxy}/prefixgate/stats").json()
    assert (stats["requests"], stats["errors"]) == (1, 1)
