"""proxy.relay: a client that leaves while the upstream is still thinking closes the upstream too.

The upstream here is a raw TCP server that reads the request and then waits, recording
whether the proxy hung up before it would have answered.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import httpx
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from tests.support.rawserver import RawRequest, RawServer, Reply
from tests.support.servers import serve

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
            except TimeoutError:
                pass
        self.sock.close()


def test_client_leaving_before_the_answer_closes_the_upstream_request(state_dir):
    upstream = SilentUpstream()
    cfg = ProxyConfig(openai_base=f"{upstream.url}/v1", anthropic_base=upstream.url, state_dir=state_dir)
    with serve(create_app(cfg)) as proxy:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{proxy}/v1/chat/completions",
                json={"model": "m", "messages": []},
                timeout=httpx.Timeout(5, read=0.5),
            )
        assert upstream.got_request.is_set()
        assert upstream.closed_by_peer.wait(5), "the proxy kept the abandoned upstream request open"
        deadline = time.monotonic() + 5
        while httpx.get(f"{proxy}/prefixgate/stats").json()["errors"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        stats = httpx.get(f"{proxy}/prefixgate/stats").json()
    assert (stats["requests"], stats["errors"]) == (1, 1)


class UvicornErrors(logging.Handler):
    """What reaches uvicorn's error logger's handlers (its filters applied)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def __enter__(self):
        logging.getLogger("uvicorn.error").addHandler(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger("uvicorn.error").removeHandler(self)


def _config(upstream: RawServer, state_dir) -> ProxyConfig:
    return ProxyConfig(openai_base=f"{upstream.url}/v1", anthropic_base=upstream.url, state_dir=state_dir)


def wait_for_requests(proxy: str, n: int) -> dict:
    deadline = time.monotonic() + 5
    while (stats := httpx.get(f"{proxy}/prefixgate/stats").json())[
        "requests"
    ] < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return stats


def no_body_reply(request: RawRequest) -> Reply:
    if request.target.endswith(b"/s204"):
        return Reply([(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", 0)])
    if request.target.endswith(b"/s304"):
        return Reply([(b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 5\r\n\r\n', 0)])
    body = b"" if request.method == b"HEAD" else b"hello"
    return Reply([(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n" + body, 0)])


@pytest.mark.parametrize(
    "method, path, status, length",
    [("DELETE", "/v1/s204", 204, None), ("GET", "/v1/s304", 304, None), ("HEAD", "/v1/files/x", 200, "5")],
)
def test_bodyless_answers_with_a_content_length_come_back_clean(state_dir, method, path, status, length):
    with (
        RawServer(no_body_reply) as upstream,
        UvicornErrors() as errors_seen,
        serve(create_app(_config(upstream, state_dir))) as proxy,
    ):
        with httpx.Client(base_url=proxy, timeout=5) as client:
            first = client.request(method, path)
            again = client.get("/v1/files/y")  # the same kept-alive connection still works
        stats = wait_for_requests(proxy, 2)
    assert first.status_code == status and first.content == b""
    assert first.headers.get("content-length") == length
    assert again.status_code == 200 and again.content == b"hello"
    assert [r.getMessage() for r in errors_seen.records if r.levelno >= logging.ERROR] == []
    assert stats["requests"] == 2 and stats["errors"] == 0


def broken_stream_reply(request: RawRequest) -> Reply:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    event = b'data: {"id":"x","choices":[]}\n\n'
    return Reply(
        [(head + b"%x\r\n" % len(event) + event + b"\r\n", 0)], close=True
    )  # then the connection just ends


def test_upstream_dying_mid_stream_is_one_warning_line_and_a_truncated_response(state_dir, caplog):
    caplog.set_level(logging.WARNING, logger="prefixgate.relay")
    with (
        RawServer(broken_stream_reply) as upstream,
        UvicornErrors() as errors_seen,
        serve(create_app(_config(upstream, state_dir))) as proxy,
    ):
        got = b""
        with pytest.raises(httpx.RemoteProtocolError):  # incomplete chunked body: visibly truncated
            with httpx.stream("GET", f"{proxy}/v1/models", timeout=5) as response:
                request_id = response.headers["x-prefixgate-request-id"]
                for chunk in response.iter_raw():
                    got += chunk
        stats = wait_for_requests(proxy, 1)
    assert got.startswith(b"data: ")
    relay_lines = [r for r in caplog.records if r.name == "prefixgate.relay"]
    assert [(r.levelno, r.getMessage()) for r in relay_lines] == [
        (logging.WARNING, f"upstream failed mid-response on request {request_id}: RemoteProtocolError")
    ]
    assert all(r.exc_info is None for r in relay_lines)
    assert [r.getMessage() for r in errors_seen.records] == []  # uvicorn's traceback record was dropped
    assert (stats["requests"], stats["errors"]) == (1, 1)


def late_first_event_reply(request: RawRequest) -> Reply:
    """Anthropic on one kept-alive connection: msg_1 as JSON, then a stream whose first event
    comes 2 s after its head, then msg_3 as JSON again."""
    if request.n != 2:
        body = (
            b'{"id":"msg_%d","type":"message","role":"assistant","content":[],"usage":{"input_tokens":5,"output_tokens":1}}'
            % request.n
        )
        return Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % len(body)
                    + body,
                    0,
                )
            ]
        )
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    start = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","usage":{"input_tokens":5,"output_tokens":1},'
        b'"diagnostics":{"cache_miss_reason":{"type":"system_changed","cache_missed_input_tokens":9}}}}\n\n'
    )
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    return Reply(
        [
            (head, 0),
            (b"%x\r\n" % len(start) + start + b"\r\n", 2.0),
            (b"%x\r\n" % len(stop) + stop + b"\r\n0\r\n\r\n", 0),
        ]
    )


def test_a_late_first_event_leaves_the_miss_reason_header_off_and_keeps_every_byte(state_dir):
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8,
        "system": "Be brief. " * 400,
        "messages": [{"role": "user", "content": "hi"}],
    }
    headers = {"x-api-key": "sk-ant-late", "anthropic-version": "2023-06-01"}
    with RawServer(late_first_event_reply) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream.url}/v1", anthropic_base=upstream.url, state_dir=state_dir, rewrite="safe"
        )
        with serve(create_app(cfg)) as proxy, httpx.Client(base_url=proxy, timeout=10) as client:
            assert client.post("/v1/messages", json=body, headers=headers).json()["id"] == "msg_1"
            started = time.monotonic()
            with client.stream(
                "POST", "/v1/messages", json={**body, "stream": True}, headers=headers
            ) as streamed:
                head_s = time.monotonic() - started
                got = b"".join(streamed.iter_raw())
            third = client.post("/v1/messages", json=body, headers=headers)
            stats = wait_for_requests(proxy, 3)
    assert head_s < 1.5 and "x-prefixgate-provider-miss-reason" not in streamed.headers
    assert got.startswith(b"event: message_start\n") and got.endswith(b'data: {"type":"message_stop"}\n\n')
    assert (
        third.json()["id"] == "msg_3" and upstream.connections == 1
    )  # read to the end: the connection was reused
    assert (stats["requests"], stats["errors"]) == (3, 0)
