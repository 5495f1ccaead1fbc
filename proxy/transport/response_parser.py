"""One request's response on one connection, parsed by llhttp (``httptools``).

A :class:`ResponseParser` is fed every byte the connection receives until its response
ends; it adds what a client must decide itself (1xx skipping, HEAD, close-delimited bodies,
:attr:`leftover`, ``MAX_HEAD``, :attr:`ResponseParser.tolerated`). Head and body reach the
caller through :meth:`head` and :class:`ResponseBody`.

It does not open, reuse or close connections. See docs/request-path.md.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable

import httptools
import httpx

from proxy.transport.strict import ChunkFraming, strict_codings, strict_heads

#: body bytes buffered before reading from the socket pauses
HIGH_WATER = 256 * 1024
LOW_WATER = 64 * 1024
#: bytes of response head (status lines, headers, interim responses); also the bound on the
#: framing bytes (chunk lines, trailers) between two body bytes
MAX_HEAD = 256 * 1024


class _Leftover(Exception):
    """A byte after the response's end (raised inside llhttp to stop it parsing)."""


class ResponseParser:
    """Parser callbacks and the state of one response (one HTTP exchange on one connection;
    not :class:`proxy.exchange.Exchange`, the proxy's whole request). ``received`` counts every
    byte, head included; ``complete``: the response ended as framed; ``tolerated``: why llhttp
    accepted framing that RFC 9112 does not (:mod:`proxy.transport.strict`: never reused).
    llhttp is lenient only about LF-only heads, as h11 is."""

    def __init__(self, method: str, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.parser.set_dangerous_leniencies(lenient_optional_cr_before_lf=True)
        self.head_only = method == "HEAD"
        self._pause, self._resume = pause, resume
        self.status = 0
        self.version = b"HTTP/1.1"
        self.headers: list[tuple[bytes, bytes]] = []
        self.received = 0
        self._header_field_bytes = 0
        self._received_in_head = 0
        self._framing_since_body = 0
        self.body_bytes = 0
        self._in_head = True
        self._in_interim = False
        self._has_length = False
        self._chunked = False
        self.head_done = False
        self.complete = False
        self.keep_alive = False
        self.leftover = False
        self.failed: Exception | None = None
        self.tolerated: str | None = None
        self._head_pieces: list[bytes] | None = []
        self._chunk_check: ChunkFraming | None = None
        self.paused = False
        self.buffered = 0
        self.chunks: deque[bytes] = deque()
        self._waiter: asyncio.Future | None = None

    # -- bytes in (called by the connection) ----------------------------------------------

    def feed(self, data: bytes) -> None:
        """The next bytes from the connection. A parse error after the response was whole is a
        leftover (what followed it was not ours), else the response's failure; the piece in which
        the final head arrives is the one that has the heads checked."""
        self.received += len(data)
        in_head = self._in_head
        if in_head:
            self._received_in_head += len(data)
            if self._head_pieces is not None:
                self._head_pieces.append(data)
        body_before = self.body_bytes
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.fail(
                httpx.RemoteProtocolError("upstream switched protocols (101), which was never asked for")
            )
        except httptools.HttpParserError as exc:
            if self.complete or self.leftover:
                self.leftover = True
            else:
                cause = exc.__context__ if isinstance(exc.__context__, httpx.RemoteProtocolError) else None
                self.fail(cause or httpx.RemoteProtocolError(f"malformed upstream response: {exc}"))
        else:
            if self._in_head and self._received_in_head > MAX_HEAD:
                self.fail(httpx.RemoteProtocolError("upstream response head too large"))
            elif not self._in_head:
                # bytes that are neither head nor body (chunk lines, trailers) since the last
                # body byte: llhttp buffers a trailer whole, so it is bounded like a head
                self._framing_since_body = (
                    0 if self.body_bytes > body_before else self._framing_since_body + len(data)
                )
                if self._framing_since_body > MAX_HEAD:
                    self.fail(
                        httpx.RemoteProtocolError("upstream sent too many bytes of chunk framing or trailers")
                    )
        if in_head:
            if not self._in_head and self.failed is None:
                self._check_head()
        elif self._chunk_check is not None:
            self._check_chunks(data)
        self._wake()

    def _check_head(self) -> None:
        """The final head is in: were the heads, and the body's framing so far, strict RFC 9112?
        (:mod:`proxy.transport.strict`; a fault only forbids reuse.)"""
        wire, self._head_pieces = self._head_pieces or [], None
        data = wire[0] if len(wire) == 1 else b"".join(wire)
        end, why = strict_heads(data)
        why = why or strict_codings(self.headers)
        if why is not None:
            self.tolerated = why
        elif self._chunked and not self.head_only and self.status not in (204, 304):
            self._chunk_check = ChunkFraming()
            self._check_chunks(data[end:])

    def _check_chunks(self, data: bytes) -> None:
        check = self._chunk_check
        assert check is not None
        check.feed(data)
        if check.fault is not None:
            self.tolerated, self._chunk_check = check.fault, None

    def eof(self, exc: Exception | None = None) -> None:
        """The server closed its side (``exc``: the connection broke): the end of a
        close-delimited body (read until close: never kept alive), else an error."""
        if self.complete or self.failed:
            return
        if exc is not None:
            self.fail(httpx.ReadError(f"upstream connection failed: {type(exc).__name__}"))
        elif self.head_done and not self.head_only and not self._has_length and not self._chunked:
            self.complete = True
        elif not self.head_done:
            self.fail(
                httpx.RemoteProtocolError("upstream closed the connection without a full response head")
            )
        else:
            self.fail(httpx.RemoteProtocolError("upstream closed the connection mid-body"))
        self._wake()

    def fail(self, exc: Exception) -> None:
        if self.failed is None and not self.complete:
            self.failed = exc
        self._wake()

    # -- llhttp callbacks -------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete or self.leftover:
            self.leftover = True
            raise _Leftover

    def on_header(self, name: bytes, value: bytes) -> None:
        """A field of the head (a trailer's is dropped)."""
        if not self._in_head:
            return
        self._header_field_bytes += len(name) + len(value) + 4
        if self._header_field_bytes > MAX_HEAD:
            raise httpx.RemoteProtocolError("upstream response head too large")
        self.headers.append((name, value))
        lname = name.lower()
        if lname == b"content-length":
            self._has_length = True
        elif lname == b"transfer-encoding":
            self._chunked = value.rsplit(b",", 1)[-1].strip().lower() == b"chunked"

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        version = self.parser.get_http_version()
        if version not in ("1.1", "1.0"):
            raise httpx.RemoteProtocolError(f"unsupported HTTP version {version!r}")
        if not 100 <= status <= 599:
            raise httpx.RemoteProtocolError(f"invalid status code {status}")
        if status == 101:
            raise httpx.RemoteProtocolError("upstream switched protocols (101), which was never asked for")
        if status < 200:
            self._in_interim = True
            self.headers = []
            self._has_length = self._chunked = False
            return
        self.status = status
        self.version = b"HTTP/" + version.encode("ascii")
        self._in_head = False
        self.head_done = True
        if self.head_only:
            self.keep_alive = self.parser.should_keep_alive() and (self._has_length or self._chunked)
            self.complete = True

    def on_body(self, body: bytes) -> None:
        """Body bytes, buffered; past :data:`HIGH_WATER` reading pauses. After a complete
        response (a HEAD response's head) they are a leftover."""
        if self.complete:
            self.leftover = True
            raise _Leftover
        self.chunks.append(body)
        self.buffered += len(body)
        self.body_bytes += len(body)
        if self.buffered > HIGH_WATER and not self.paused:
            self.paused = True
            self._pause()

    def on_message_complete(self) -> None:
        """A message ended: an interim one, or the response (its keep-alive read now, before
        llhttp resets its flags)."""
        if self._in_interim:
            self._in_interim = False
            return
        if self.complete:
            return
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True

    # -- the caller's side ------------------------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def news(self) -> asyncio.Future:
        """A future done at the next event (bytes, the end, an error)."""
        self._waiter = asyncio.get_running_loop().create_future()
        return self._waiter

    async def wait(self, timeout: float | None) -> None:
        """Until something new happened (bytes, the end, an error)."""
        self.news()
        try:
            async with asyncio.timeout(timeout):
                await self._waiter
        finally:
            self._waiter = None

    async def head(self, timeout: float | None) -> None:
        """Until the final response's head is in; raises its error."""
        while not self.head_done:
            if self.failed is not None:
                raise self.failed
            try:
                await self.wait(timeout)
            except TimeoutError:
                raise httpx.ReadTimeout("timed out waiting for the upstream response") from None

    def take(self) -> bytes:
        data = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        if self.paused:
            self.paused = False
            self._resume()
        return data


class ResponseBody(httpx.AsyncByteStream):
    """The body as it arrives (one piece per network arrival); ``aclose`` hands the
    connection back through ``done(parser)``, which decides reuse."""

    def __init__(
        self, parser: ResponseParser, done: Callable[[ResponseParser], None], read_timeout: float | None
    ) -> None:
        self._parser = parser
        self._done = done
        self._read_timeout = read_timeout
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        ex = self._parser
        while True:
            if ex.chunks:
                yield ex.take()
            elif ex.failed is not None:
                raise ex.failed
            elif ex.complete:
                return
            else:
                try:
                    await ex.wait(self._read_timeout)
                except TimeoutError:
                    raise httpx.ReadTimeout("timed out reading the upstream response") from None

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._done(self._parser)
