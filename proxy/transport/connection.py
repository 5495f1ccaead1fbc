"""One upstream connection as an asyncio protocol: bytes in go to the current response parser.

A :class:`Connection` owns its transport (TCP or TLS) and at most one
:class:`~proxy.transport.response_parser.ResponseParser` at a time. Bytes that arrive while no
exchange is running, or after the running one's response ended, are unsolicited: the
connection is marked :attr:`dead` and closed at once (a ``408`` sent to an idle
keep-alive connection is the common case). The end of the stream is handed to the
exchange (a close-delimited body ends there) and also kills the connection. Writing
waits for the transport's buffer to drain below its high-water mark; a connection killed with
bytes still unsent is aborted, never left waiting for a peer that does not read.

This module does not decide reuse (:mod:`proxy.transport.reuse`) or keep a pool.
"""

from __future__ import annotations

import asyncio

import httpx

from proxy.transport.response_parser import ResponseParser


class Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser: ResponseParser | None = None
        self.dead = False  # never to be reused
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
        self.dead = True
        if self.parser is not None:
            self.parser.eof()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = self.lost = True
        if self.parser is not None:
            self.parser.eof(exc)
        if self._drained is not None and not self._drained.done():
            self._drained.set_exception(ConnectionResetError("connection lost while writing"))
            self._drained.exception()  # retrieved: with no writer waiting (a send cut, then killed) it is no error to log

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
        buffer is full, and stops waiting when the upstream answers first (an early 413,
        say: the response is read, the connection never reused). Raises
        ``ConnectionError`` when the connection is gone."""
        transport, parser = self.transport, self.parser
        if transport is None or transport.is_closing() or self.lost:
            raise ConnectionResetError("connection closed before the request was sent")
        transport.write(payload)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._drained is not None and not self._drained.done():
            if parser is not None and (parser.head_done or parser.failed is not None):
                self.dead = True  # answered before the request was out: never reused
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
