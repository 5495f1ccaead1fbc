"""proxy.server.shutdown: a real ``prefixgate serve`` stopped with requests in flight writes one
ledger row per request, the cut ones marked cut, and exits within its shutdown timeout.

Streams: 20 OpenAI SDK streams held by the emulator after their first event
(``x-emulator-hold``). Waiting: Anthropic SDK requests to an upstream that never answers.
"""

from __future__ import annotations

import signal
import socket
import sqlite3
import threading
import time

import anthropic
import httpx
import openai
import pytest

from proxy.emulator.app import create_app as create_emulator
from proxy.emulator.config import EmulatorConfig
from tests.support.proxy_process import proxy_process
from tests.support.rawserver import SilentServer
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

STREAMS = 20
WAITING = 4


class InFlight:
    """Starts the streams and the waiting requests in threads; collects how each ended."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.first_chunks = threading.Semaphore(0)
        self.outcomes: dict[str, str] = {}
        self.threads: list[threading.Thread] = []

    def _stream(self, i: int) -> None:
        client = openai.OpenAI(base_url=f"{self.base}/v1", api_key="sk-shutdown", max_retries=0, timeout=60)
        try:
            stream = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"stream {i}"}],
                stream=True,
                extra_headers={"x-emulator-hold": f"hold-{i}"},
            )
            for n, _ in enumerate(stream):
                if n == 0:
                    self.first_chunks.release()
            self.outcomes[f"stream-{i}"] = "complete"
        except Exception as exc:
            self.outcomes[f"stream-{i}"] = type(exc).__name__

    def _waiting(self, i: int) -> None:
        client = anthropic.Anthropic(base_url=self.base, api_key="sk-ant-shutdown", max_retries=0, timeout=60)
        try:
            client.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=[{"role": "user", "content": f"wait {i}"}]
            )
            self.outcomes[f"waiting-{i}"] = "complete"
        except anthropic.APIStatusError as exc:
            self.outcomes[f"waiting-{i}"] = (
                f"{exc.status_code} {exc.response.headers.get('x-prefixgate-error')}"
            )
        except Exception as exc:
            self.outcomes[f"waiting-{i}"] = type(exc).__name__

    def start(self, waiting: int = 0) -> None:
        self.threads = [threading.Thread(target=self._stream, args=(i,), daemon=True) for i in range(STREAMS)]
        self.threads += [
            threading.Thread(target=self._waiting, args=(i,), daemon=True) for i in range(waiting)
        ]
        for thread in self.threads:
            thread.start()
        for _ in range(STREAMS):
            assert self.first_chunks.acquire(timeout=30), "streams did not start"

    def join(self) -> None:
        for thread in self.threads:
            thread.join(30)


def ledger_rows(path) -> list[tuple[str, str, int, str | None]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT provider, route, status, error FROM requests").fetchall()
    finally:
        conn.close()


def release_all(upstream: str) -> None:
    for i in range(STREAMS):
        httpx.post(f"{upstream}/_emulator/release/hold-{i}")


def wait_until(check, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize(
    "signals, shutdown_timeout",
    [((signal.SIGINT, signal.SIGINT), "60"), ((signal.SIGTERM,), "1")],
    ids=["second-ctrl-c", "timeout"],
)
def test_streams_cut_by_shutdown_are_each_recorded_as_cut(tmp_path, signals, shutdown_timeout):
    silent = SilentServer()
    with serve(create_emulator(EmulatorConfig(hold_timeout_s=120))) as upstream:
        try:
            with proxy_process(
                tmp_path, upstream, "--shutdown-timeout", shutdown_timeout, anthropic=silent.url
            ) as proxy:
                flight = InFlight(proxy.base)
                flight.start(waiting=WAITING)
                wait_until(lambda: silent.requests == WAITING)
                started = time.monotonic()
                for sig in signals:
                    proxy.proc.send_signal(sig)
                    time.sleep(0.3)
                proxy.proc.wait(timeout=30)
                took = time.monotonic() - started
                flight.join()
        finally:
            release_all(upstream)
    output = proxy.output()
    rows = ledger_rows(proxy.ledger)
    assert took < 10, f"shutdown took {took:.1f}s"
    assert len(rows) == STREAMS + WAITING, output
    assert sorted(rows) == sorted(
        [("openai", "/v1/chat/completions", 503, "shutdown_cut")] * STREAMS
        + [("anthropic", "/v1/messages", 503, "shutdown_cut")] * WAITING
    )
    assert all(flight.outcomes[f"stream-{i}"] != "complete" for i in range(STREAMS)), (
        flight.outcomes
    )  # aborted, not a clean end
    assert [flight.outcomes[f"waiting-{i}"] for i in range(WAITING)] == ["503 shutdown_cut"] * WAITING
    assert output.count("cut by shutdown") == STREAMS + WAITING
    assert "Traceback" not in output and "Exception in ASGI application" not in output


def test_streams_that_finish_within_the_shutdown_timeout_are_complete(tmp_path):
    with serve(create_emulator(EmulatorConfig(hold_timeout_s=120))) as upstream:
        try:
            with proxy_process(tmp_path, upstream, "--shutdown-timeout", "30") as proxy:
                flight = InFlight(proxy.base)
                flight.start()
                proxy.proc.send_signal(signal.SIGTERM)
                time.sleep(0.5)
                assert proxy.proc.poll() is None, "exited with streams in flight"
                release_all(upstream)
                proxy.proc.wait(timeout=30)
                flight.join()
        finally:
            release_all(upstream)
    rows = ledger_rows(proxy.ledger)
    assert rows == [("openai", "/v1/chat/completions", 200, None)] * STREAMS
    assert set(flight.outcomes.values()) == {"complete"}
    assert "cut by shutdown" not in proxy.output()


def test_a_request_cut_while_its_body_is_still_uploading_gets_its_row(tmp_path):
    with serve(create_emulator(EmulatorConfig())) as upstream:
        with proxy_process(tmp_path, upstream, "--shutdown-timeout", "1") as proxy:
            host, port = proxy.base.removeprefix("http://").split(":")
            slow = socket.create_connection((host, int(port)))
            head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            slow.sendall(head + b'{"model": "gpt-4o-mini", ')  # the rest never comes
            time.sleep(0.3)
            proxy.proc.send_signal(signal.SIGTERM)
            proxy.proc.wait(timeout=30)
            slow.settimeout(5)
            answer = b""
            while chunk := slow.recv(65536):
                answer += chunk
            slow.close()
    assert answer.startswith(b"HTTP/1.1 503 ") and b"shutting down" in answer, answer
    output = proxy.output()
    assert ledger_rows(proxy.ledger) == [("openai", "/v1/chat/completions", 503, "shutdown_cut")], output
    assert output.count("cut by shutdown") == 1 and "Traceback" not in output
