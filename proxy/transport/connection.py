"""One upstream connection as an asyncio protocol: bytes in go to the current response parser.

A :class:`Connection` owns its transport (TCP or TLS) and at most one
:class:`~proxy.transport.response_parser.ResponseParser` at a time. Bytes that arrive while no
exchange runs, or after its response ended, are unsolicited: the connection is marked
:attr:`~Connection.dead` and closed at once; so is it at the end of the stream (handed to the
exchange: a close-delimited body ends there).

It does not decide reuse (:mod:`proxy.transport.reuse`) or keep a pool. See docs/request-path.md.
"""

from __future__ import annotations

import asyncio

import httpx

from proxy.transport.response_parser import ResponseParser


class Connection(asyncio.Protocol):
    """``dead``: never to be reused; ``lost``: the transport is gone; ``reused``: it carried an
    exchange before; ``idle_since``: when it last went back to the pool (``time.monotonic``)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser: ResponseParser | None = None
        self.dead = False
        self.lost = False
        self.reused = False
        self.idle_since = 0.0
        self._drained: asyncio.Future | None = None

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        ex = self.parser
        if ex is None or ex.complete or ex.failed is not None:
            if ex is not None and ex.complete:
                ex.leftover = True
            self.kill()
            return
        ex.feed(data)
        if ex.failed is not None or ex.leftover:
            self.kill()

    def eof_received(self) -> bool:
        """The end of the stream: handed to the exchange, then the transport closes."""
        self.dead = True
        if self.parser is not None:
            self.parser.eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = self.lost = True
        if self.parser is not None:
            self.parser.eof(exc)
        if self._drained is not None and not self._drained.done():
            self._drained.set_exception(ConnectionResetError("connection lost while writing"))
            # retrieved: with no writer waiting (a send cut, then killed) it is no error to log
            self._drained.exception()

    def pause_writing(self) -> None:
        if self._drained is None or self._drained.done():
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    # -- the pool's side --------------------------------------------------------------------

    def start(self, method: str) -> ResponseParser:
        transport = self.transport
        assert transport is not None
        self.parser = ResponseParser(method, transport.pause_reading, transport.resume_reading)
        return self.parser

    async def write(self, payload: bytes, timeout: float | None) -> None:
        """Sends ``payload`` in one write; waits (up to ``timeout``) only when the kernel
        buffer is full (until it drains below its high-water mark), and stops waiting when the
        upstream answers first (an early 413, say: the response is read, the connection never
        reused). Raises ``ConnectionError`` when the connection is gone."""
        transport, parser = self.transport, self.parser
        if transport is None or transport.is_closing() or self.lost:
            raise ConnectionResetError("connection closed before the request was sent")
        transport.write(payload)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._drained is not None and not self._drained.done():
            if parser is not None and (parser.head_done or parser.failed is not None):
                self.dead = True
                return
            waits = {self._drained} if parser is None else {self._drained, parser.news()}
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                raise httpx.WriteTimeout("timed out sending the request upstream")
            await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        if self._drained is not None and self._drained.done() and self._drained.exception() is not None:
            raise ConnectionResetError("connection lost while sending the request")

    def kill(self) -> None:
        """Never reuse; close now. With bytes still unsent (an upstream that stopped reading
        the request) the socket is aborted: a plain close would keep it, and its buffer, until
        the peer reads them, which a hung upstream never does."""
        self.dead = True
        transport = self.transport
        if transport is not None:
            if transport.get_write_buffer_size():
                transport.abort()
            else:
                transport.close()
