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

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reader = self._conn.reader
        while not self._done:
            if self._framing == "length":
                data = await self._read(reader.read(min(self._left, READ_SIZE)))
                if not data:
                    raise httpx.RemoteProtocolError("upstream closed the connection before Content-Length bytes")
                self._left -= len(data)
                self._done = self._left == 0
                yield data
            elif self._framing == "chunked":
                if self._left == 0:
                    line = await self._read(reader.readuntil(b"\r\n"))
                    size_text = line.split(b";", 1)[0].strip()
                    try:
                        size = int(size_text, 16)
                    except ValueError:
                        raise httpx.RemoteProtocolError("malformed chunk size") from None
                    if size == 0:
                        while (await self._read(reader.readuntil(b"\r\n"))) != b"\r\n":
                            pass  # trailers, ignored
                        self._done = True
                        break
                    self._left = size
                data = await self._read(reader.read(min(self._left, READ_SIZE)))
                if not data:
                    raise httpx.RemoteProtocolError("upstream closed the connection mid-chunk")
                self._left -= len(data)
                if self._left == 0:
                    if await self._read(reader.readexactly(2)) != b"\r\n":
                        raise httpx.RemoteProtocolError("chunk not followed by CRLF")
                yield data
            else:  # read until the server closes
                data = await self._read(reader.read(READ_SIZE))
                if not data:
                    self._done = True
                    break
                yield data

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._done and self._keep and self._framing != "close":
            self._release()
        else:
            self._discard()
