"""HTTP/1.1 response wire format for :mod:`proxy.h1`: the head, the body framing, the body.

- :func:`parse_head`: status line and header lines of a response head (bytes ending in
  CRLF CRLF) → (version, status, raw headers); malformed heads raise
  ``httpx.RemoteProtocolError``.
- :func:`framing_of`: how the body is delimited (RFC 9112 §6.3): none (HEAD, 1xx, 204,
  304), chunked, Content-Length, or until the server closes; and whether the connection
  may be reused.
- :class:`Body`: the body as an ``httpx.AsyncByteStream`` yielding bytes as they arrive
  (transfer coding removed, content coding kept); read to the end, it hands the
  connection back, otherwise closes it.

This module does not open connections or send requests.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Callable

import httpx

READ_SIZE = 64 * 1024
MAX_LINE = 64 * 1024  # longest chunk-size or trailer line accepted
_NO_BODY_STATUS = (204, 304)


def parse_head(data: bytes) -> tuple[bytes, int, list[tuple[bytes, bytes]]]:
    lines = data[:-4].split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    code = rest[:3]
    if not version.startswith(b"HTTP/1.") or not code.isdigit():
        raise httpx.RemoteProtocolError(f"malformed status line {lines[0][:80]!r}")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise httpx.RemoteProtocolError("malformed response header line")
        headers.append((name, value.strip()))
    return version, int(code), headers


def framing_of(method: str, version: bytes, status: int, headers: list[tuple[bytes, bytes]]) -> tuple[str, int, bool]:
    keep = version == b"HTTP/1.1"
    length: int | None = None
    chunked = False
    for name, value in headers:
        lname = name.lower()
        if lname == b"content-length":
            if not value.isdigit() or (length is not None and length != int(value)):
                raise httpx.RemoteProtocolError("invalid Content-Length")
            length = int(value)
        elif lname == b"transfer-encoding":
            chunked = value.lower().split(b",")[-1].strip() == b"chunked"
        elif lname == b"connection":
            tokens = {t.strip().lower() for t in value.split(b",")}
            if b"close" in tokens:
                keep = False
            elif b"keep-alive" in tokens and version == b"HTTP/1.0":
                keep = True
    if method == "HEAD" or status in _NO_BODY_STATUS or 100 <= status < 200:
        return "none", 0, keep
    if chunked:
        return "chunked", 0, keep
    if length is not None:
        return "length", length, keep
    return "close", 0, False


class Body(httpx.AsyncByteStream):
    """The response body as it arrives; returns the connection to the pool when read to the end."""

    def __init__(self, conn, release: Callable[[], None], discard: Callable[[], None], framing: str, length: int, keep: bool, read_timeout: float | None) -> None:
        self._conn = conn  # has .reader (asyncio.StreamReader)
        self._release = release  # the connection goes back to the pool
        self._discard = discard  # the connection is closed
        self._framing = framing  # "length" | "chunked" | "close" | "none"
        self._left = length
        self._keep = keep
        self._read_timeout = read_timeout
        self._done = framing == "none" or (framing == "length" and length == 0)
        self._closed = False

    async def _read(self, coro):
        try:
            async with asyncio.timeout(self._read_timeout):
                return await coro
        except TimeoutError:
            raise httpx.ReadTimeout("timed out reading the upstream response") from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("upstream closed the connection mid-body") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("chunk header too long") from None
        except (ConnectionError, OSError) as exc:
            raise httpx.ReadError(f"upstream connection failed: {type(exc).__name__}") from None

    def __aiter__(self) -> AsyncIterator[bytes]:
        if self._framing == "chunked":
            return self._chunks(self._conn.reader)
        return self._plain(self._conn.reader)

    async def _plain(self, reader) -> AsyncIterator[bytes]:
        """Content-Length and read-until-close bodies."""
        while not self._done:
            if self._framing == "length":
                data = await self._read(reader.read(min(self._left, READ_SIZE)))
                if not data:
                    raise httpx.RemoteProtocolError("upstream closed the connection before Content-Length bytes")
                self._left -= len(data)
                self._done = self._left == 0
                yield data
            else:  # read until the server closes
                data = await self._read(reader.read(READ_SIZE))
                if not data:
                    self._done = True
                    break
                yield data

    async def _chunks(self, reader) -> AsyncIterator[bytes]:
        """Chunked transfer coding, decoded from whatever has arrived: one read per network
        arrival (not one per chunk, size line and CRLF), every payload byte yielded as soon
        as it is in. Bytes after the last chunk mean the connection cannot be reused."""
        buf = bytearray()
        left = 0  # payload bytes still due in the current chunk
        crlf = False  # the current chunk's closing CRLF is still due
        trailers = False  # the last chunk was seen: trailer lines until an empty one
        while True:
            out = bytearray()
            while True:
                if left:
                    take = min(left, len(buf))
                    out += buf[:take]
                    del buf[:take]
                    left -= take
                    if left:
                        break
                    crlf = True
                if crlf:
                    if len(buf) < 2:
                        break
                    if buf[:2] != b"\r\n":
                        raise httpx.RemoteProtocolError("chunk not followed by CRLF")
                    del buf[:2]
                    crlf = False
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > MAX_LINE:
                        raise httpx.RemoteProtocolError("chunk header too long")
                    break
                line = bytes(buf[:end])
                del buf[: end + 2]
                if trailers:
                    if not line:  # the end of the body
                        self._done = True
                        self._keep = self._keep and not buf
                        break
                    continue  # a trailer, ignored
                try:
                    left = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise httpx.RemoteProtocolError("malformed chunk size") from None
                if left < 0:
                    raise httpx.RemoteProtocolError("malformed chunk size")
                trailers = left == 0
            if out:
                yield bytes(out)
            if self._done:
                return
            data = await self._read(reader.read(READ_SIZE))
            if not data:
                raise httpx.RemoteProtocolError("upstream closed the connection mid-chunk")
            buf += data

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._done and self._keep and self._framing != "close":
            self._release()
        else:
            self._discard()
