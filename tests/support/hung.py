"""Dependencies that hang, for the stop tests: raw sockets on loopback, one thread per connection.

- :class:`HungListener` accepts and then does nothing: never reads, never answers, never
  closes (an upstream or a Redis that hangs; its peer's writes pile up in the kernel buffers).
- :class:`ScriptedUpstream` speaks just enough HTTP/1.1 for the proxy: an OpenAI chat
  completion answered at once; one with ``"stream": true`` answered with SSE events every
  :data:`TRICKLE_S`, forever; a Gemini ``generateContent`` answered at once; and a Gemini
  ``cachedContents`` call (the auto-cache's background call) read, then never answered.

Both count what they saw and close every socket in :meth:`close`. Nothing here asserts.
"""

from __future__ import annotations

import json
import socket
import threading
import time

TRICKLE_S = 0.05

_CHAT = json.dumps(
    {
        "id": "chatcmpl-stop",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
    }
).encode()
_EVENT = b'data: {"id":"chatcmpl-stop","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
_GEMINI = json.dumps(
    {
        "candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5000, "candidatesTokenCount": 1, "totalTokenCount": 5001},
        "modelVersion": "gemini-2.5-flash",
    }
).encode()


class _Listener:
    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                self._conns.append(conn)
            self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        pass

    def close(self) -> None:
        self.sock.close()
        with self._lock:
            for conn in self._conns:
                try:
                    conn.close()
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class HungListener(_Listener):
    """Accepts, then nothing (the accepted sockets are kept open until :meth:`close`)."""


class ScriptedUpstream(_Listener):
    def __init__(self) -> None:
        self.seen: list[str] = []  # request lines, in arrival order
        super().__init__()

    def _serve(self, conn: socket.socket) -> None:
        threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def count(self, fragment: str) -> int:
        return sum(fragment in line for line in list(self.seen))

    def _run(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                length = next(
                    (
                        int(v)
                        for k, _, v in (line.partition(":") for line in lines[1:])
                        if k.strip().lower() == "content-length"
                    ),
                    0,
                )
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
                self.seen.append(lines[0])
                if "cachedContents" in lines[0]:
                    time.sleep(3600)  # read, never answered
                elif "generateContent" in lines[0]:
                    conn.sendall(_head("application/json", len(_GEMINI)) + _GEMINI)
                elif b'"stream":true' in body.replace(b" ", b""):
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                    )
                    while True:
                        conn.sendall(b"%x\r\n%s\r\n" % (len(_EVENT), _EVENT))
                        time.sleep(TRICKLE_S)
                else:
                    conn.sendall(_head("application/json", len(_CHAT)) + _CHAT)
        except OSError:
            return


def _head(content_type: str, length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n\r\n".encode()
