"""A tiny streaming upstream for held-stream load: ``python -m proxy.bench.stream_upstream --port P``.

Every ``POST`` gets the head and a first OpenAI-shaped SSE event at once or ``first_s`` later,
then is *held*: the rest (content, usage, ``[DONE]``) follows when ``barrier`` streams are open
at once, or ``hold_s`` after it began, whichever is first. A bare asyncio protocol (uvloop when
installed): a few tens of µs of CPU per stream, never the bottleneck. ``POST /_config``
(``barrier``, ``hold_s``, ``first_s``) sets them and clears the counters; ``GET /_stats`` says
``open``, ``max_open``, ``served``, ``connections``. Keep-alive, one request at a time; not a
general HTTP server: no TLS, no pipelining, request bodies need a Content-Length.
"""

from __future__ import annotations

import argparse
import asyncio
import json

_EVENTS = (
    b'data: {"id":"chatcmpl-held","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n',
    b'data: {"id":"chatcmpl-held","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"held"},"finish_reason":"stop"}]}\n\n',
    b'data: {"id":"chatcmpl-held","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],'
    b'"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}\n\n',
    b"data: [DONE]\n\n",
)
_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


FIRST = _HEAD + _chunk(_EVENTS[0])
REST = b"".join(_chunk(e) for e in _EVENTS[1:]) + b"0\r\n\r\n"


class State:
    def __init__(self, barrier: int, hold_s: float) -> None:
        self.configure(barrier, hold_s)
        self.connections = 0

    def configure(self, barrier: int, hold_s: float, first_s: float = 0.0) -> None:
        self.barrier, self.hold_s, self.first_s = barrier, hold_s, first_s
        self.open = self.max_open = self.served = 0
        self.held: list[Conn] = []

    def stats(self) -> dict:
        return {
            "open": self.open,
            "max_open": self.max_open,
            "served": self.served,
            "connections": self.connections,
            "barrier": self.barrier,
            "hold_s": self.hold_s,
            "first_s": self.first_s,
        }


class Conn(asyncio.Protocol):
    def __init__(self, state: State) -> None:
        self.state = state
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.streaming = False
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.state.connections += 1

    def connection_lost(self, exc) -> None:
        if self.streaming:
            self._end(send=False)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while not self.streaming:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buf) < end + 4 + length:
                return
            body, self.buf = self.buf[end + 4 : end + 4 + length], self.buf[end + 4 + length :]
            self._answer(head.split(b" ", 2)[:2], body)

    def _answer(self, line: list[bytes], body: bytes) -> None:
        assert self.transport is not None
        method, target = (line + [b"", b""])[:2]
        st = self.state
        if target.startswith(b"/_stats"):
            self._json(st.stats())
        elif target.startswith(b"/_config"):
            conf = json.loads(body or b"{}")
            for conn in list(st.held):
                conn._end()
            st.configure(
                int(conf.get("barrier", st.barrier)),
                float(conf.get("hold_s", st.hold_s)),
                float(conf.get("first_s", st.first_s)),
            )
            self._json(st.stats())
        else:
            self.streaming = True
            st.open += 1
            st.max_open = max(st.max_open, st.open)
            # a model's time to first token: the head and the first event come after it
            if st.first_s > 0:
                self.timer = asyncio.get_running_loop().call_later(st.first_s, self._first)
            else:
                self._first()

    def _first(self) -> None:
        assert self.transport is not None
        st = self.state
        self.timer = None
        if not self.streaming or self.transport.is_closing():
            return
        self.transport.write(FIRST)
        if st.open >= st.barrier:
            for conn in list(st.held):
                conn._end()
            self._end()
        else:
            st.held.append(self)
            self.timer = asyncio.get_running_loop().call_later(st.hold_s, self._end)

    def _json(self, data: dict) -> None:
        assert self.transport is not None
        body = json.dumps(data).encode()
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
            % (len(body), body)
        )

    def _end(self, send: bool = True) -> None:
        if not self.streaming:
            return
        self.streaming = False
        st = self.state
        st.open -= 1
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self in st.held:
            st.held.remove(self)
        if send and self.transport is not None and not self.transport.is_closing():
            st.served += 1
            self.transport.write(REST)
            if self.buf:
                self.data_received(b"")


async def serve(port: int, barrier: int, hold_s: float, host: str = "127.0.0.1") -> None:
    import gc

    # the interpreter's own heap, never scanned again
    gc.collect()
    gc.freeze()
    state = State(barrier, hold_s)
    server = await asyncio.get_running_loop().create_server(lambda: Conn(state), host, port, backlog=8192)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--barrier", type=int, default=1, help="release the held streams once this many are open at once"
    )
    parser.add_argument(
        "--hold-s", type=float, default=0.0, help="release a held stream this long after it began"
    )
    args = parser.parse_args(argv)
    from proxy.transport.limits import raise_fd_limit

    raise_fd_limit()
    try:
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run
    try:
        run(serve(args.port, args.barrier, args.hold_s))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
