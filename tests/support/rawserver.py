"""A raw-socket upstream for transport tests: plays scripted bytes, however broken.

A script maps each :class:`RawRequest` (its number on this server, method, target and
the tag its target carries: ``/v1/chat/completions?tag=N`` or ``/tag/N``) to a
:class:`Reply`: pieces of bytes with delays, whether to close afterwards, and bytes to push
later onto the idle connection, or to hold the connection open and never answer on it
again. :func:`echo` is the well-formed reply that names the tag,
so a test can tell whose response a client got; :meth:`RawServer.wait_ended` waits for a
connection's end (for an event, not a delay). :class:`SilentServer` accepts and never answers.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

_TAG = re.compile(rb"tag[=/]([A-Za-z0-9_-]+)")


@dataclass(frozen=True)
class RawRequest:
    n: int  # 1 for the first request this server received
    method: bytes
    target: bytes
    tag: str  # "?" when the target carries none
    conn: int = 0  # the connection it came on: 1 for the first this server accepted


@dataclass
class Reply:
    pieces: list[tuple[bytes, float]]  # (bytes, seconds to wait before sending them)
    close: bool = False  # close the connection after the pieces
    idle: list[tuple[bytes, float]] = field(default_factory=list)  # sent later, unasked
    hold: bool = False  # after the pieces, keep the connection open but never answer on it again


def echo_bytes(tag: str) -> bytes:
    body = b'{"tag":"' + tag.encode() + b'"}'
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


def echo(tag: str) -> Reply:
    return Reply([(echo_bytes(tag), 0.0)])


Script = Callable[[RawRequest], Reply]


class RawServer:
    """``with RawServer(script) as srv: srv.url`` — one thread per connection."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.count = 0
        self.connections = 0
        self.held_requests = 0  # requests that reached a connection a Reply(hold=True) held
        self.requests: list[RawRequest] = []  # in the order they arrived
        self._ended: dict[int, threading.Event] = {}  # per connection: its thread is done with it
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._stop = False
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> RawServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop = True
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                number = self.connections
                ended = self._ended[number] = threading.Event()
            threading.Thread(target=self._serve, args=(conn, number, ended), daemon=True).start()

    def wait_ended(self, conn: int, timeout: float) -> bool:
        """True once connection ``conn`` (a :attr:`RawRequest.conn`) has ended: the peer closed
        it, the reply closed it, or it broke; False if it is still open after ``timeout``."""
        with self._lock:
            ended = self._ended.get(conn)
        return ended is not None and ended.wait(timeout)

    def _serve(self, conn: socket.socket, number: int, ended: threading.Event) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                buf = buf[length:]
                line = head.split(b"\r\n", 1)[0]
                match = _TAG.search(line)
                method, target = (line.split(b" ") + [b"", b""])[:2]
                with self._lock:
                    self.count += 1
                    request = RawRequest(
                        self.count, method, target, match.group(1).decode() if match else "?", number
                    )
                    self.requests.append(request)
                reply = self.script(request)
                for data, delay in reply.pieces:
                    if delay:
                        time.sleep(delay)
                    conn.sendall(data)
                if reply.idle:
                    threading.Thread(target=self._later, args=(conn, reply.idle), daemon=True).start()
                if reply.close:
                    conn.shutdown(socket.SHUT_RDWR)
                    return
                if reply.hold:  # read (and count) what comes, answer nothing, until the peer closes
                    while data := conn.recv(65536):
                        with self._lock:
                            self.held_requests += data.count(b"\r\n\r\n")
                    return
        except OSError:
            return
        finally:
            conn.close()
            ended.set()

    @staticmethod
    def _later(conn: socket.socket, pieces: list[tuple[bytes, float]]) -> None:
        try:
            for data, delay in pieces:
                time.sleep(delay)
                conn.sendall(data)
        except OSError:
            pass


class SilentServer:
    """Accepts connections and never answers. ``hold``: keep each one open and count the
    requests read (until the peer closes); otherwise close it at once (count only)."""

    def __init__(self, hold: bool = True) -> None:
        self.hold = hold
        self.connections = 0
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            if self.hold:
                threading.Thread(target=self._hold, args=(conn,), daemon=True).start()
            else:
                conn.close()

    def _hold(self, conn: socket.socket) -> None:
        with conn:
            try:
                while data := conn.recv(65536):
                    self.requests += b"\r\n\r\n" in data
            except OSError:
                pass
