"""A tiny HTTP/1.1 keep-alive client for load tests: one connection, one request at a time.

A full client (httpx, an SDK) costs several milliseconds of CPU per request, which on a
2-core machine is more than the proxy under test; this one writes the request in one send
and reads ``Content-Length`` or chunked answers, so most of a load test's CPU goes to the
servers. It returns the status, the headers (lower-case names) and the body; it never
retries (a request sent twice would be two requests in the ledger), and a connection that
breaks raises :class:`BrokenResponse`. Requests are built with
:func:`proxy.bench.http.build_request`. No TLS, redirects, compression or HTTP/2.
"""

from __future__ import annotations

import asyncio
import socket


class BrokenResponse(Exception):
    """The connection closed before the whole response came."""


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._streams is None or self._streams[0].at_eof():
            reader, writer = await asyncio.open_connection(self.host, self.port)
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._streams = reader, writer
        return self._streams

    async def exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        reader, writer = await self._open()
        writer.write(request)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            headers = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            if "content-length" in headers:
                body = await reader.readexactly(int(headers["content-length"]))
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                parts = []
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    parts.append((await reader.readexactly(size + 2))[:-2])
                    if size == 0:
                        break
                body = b"".join(parts)
            else:  # no framing: the body runs to the end of the connection
                body = await reader.read()
                self.close()
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            ValueError,
            IndexError,
        ) as exc:
            self.close()
            raise BrokenResponse(f"{type(exc).__name__}: {exc}") from exc
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None
