"""A minimal HTTP/1.1 keep-alive load client for ``prefixgate bench proxy``.

Each worker owns one pooled TCP connection (``TCP_NODELAY``, one send per request, kept open
so connects never land in the timings) and sends back to back; concurrency is the number of
workers. Per request: time to the first body byte and to the last (``Content-Length`` or
chunked). Deliberately tiny, so the client costs far less CPU than the servers it measures
(httpx would dominate on a small machine). No TLS, HTTP/2, redirects or compression; it parses
no bodies.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Sample:
    ttfb_s: float
    total_s: float
    status: int


@dataclass
class RunResult:
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0
    errors: int = 0

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.status == 200]


def build_request(host: str, port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        f"host: {host}:{port}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: keep-alive",
    ]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def _read_response(reader: asyncio.StreamReader, started: float) -> Sample:
    # an EOF here: nothing of the response came
    head = await reader.readuntil(b"\r\n\r\n")
    try:
        return await _read_body(reader, head, started)
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        raise BrokenResponse(f"connection closed mid-response: {exc!r}") from exc


async def _read_body(reader: asyncio.StreamReader, head: bytes, started: float) -> Sample:
    status = int(head.split(b" ", 2)[1])
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        if b":" in line:
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip().lower()
    first: float | None = None
    if b"content-length" in headers:
        remaining = int(headers[b"content-length"])
        while remaining:
            data = await reader.read(min(remaining, 65536))
            if not data:
                raise BrokenResponse("connection closed mid-body")
            first = first or time.perf_counter()
            remaining -= len(data)
    elif headers.get(b"transfer-encoding") == b"chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            first = first or time.perf_counter()
            await reader.readexactly(size + 2)
            if size == 0:
                break
    end = time.perf_counter()
    return Sample((first or end) - started, end - started, status)


class BrokenResponse(Exception):
    """The server closed the connection after part of a response."""


class Pool:
    """Open keep-alive connections to one server, reused across runs (no connects in the timings)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return reader, writer

    async def ensure(self, n: int) -> None:
        """At least ``n`` open connections; ones the server closed while idle are replaced."""
        for slot, (reader, writer) in enumerate(self.conns):
            if reader.at_eof():
                writer.close()
                self.conns[slot] = await self.connect()
        while len(self.conns) < n:
            self.conns.append(await self.connect())

    async def aclose(self) -> None:
        for _, writer in self.conns:
            writer.close()
        self.conns.clear()


async def _exchange(pool: Pool, slot: int, request: bytes) -> Sample:
    """One request/response on ``slot``; a keep-alive connection the server closed before
    answering (idle timeout) is replaced and the request sent once more, as HTTP clients do."""
    for attempt in (0, 1):
        reader, writer = pool.conns[slot]
        started = time.perf_counter()
        writer.write(request)
        try:
            return await _read_response(reader, started)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            writer.close()
            pool.conns[slot] = await pool.connect()
            if attempt or getattr(exc, "partial", b""):
                raise BrokenResponse(f"connection closed before the response: {exc!r}") from exc
    raise AssertionError("unreachable")


async def _worker(
    pool: Pool,
    slot: int,
    make: Callable[[int], bytes],
    next_index: Callable[[], int | None],
    result: RunResult,
) -> None:
    while (i := next_index()) is not None:
        try:
            sample = await _exchange(pool, slot, make(i))
        except (BrokenResponse, asyncio.IncompleteReadError, ValueError):
            result.errors += 1
            pool.conns[slot][1].close()
            pool.conns[slot] = await pool.connect()
            continue
        result.samples.append(sample)
        if sample.status != 200:
            result.errors += 1


async def run_load(pool: Pool, make: Callable[[int], bytes], requests: int, concurrency: int) -> RunResult:
    """Send ``requests`` requests (``make(i)`` builds request i) over ``concurrency`` pooled connections."""
    workers = min(concurrency, requests)
    await pool.ensure(workers)
    counter = iter(range(requests))
    result = RunResult()

    def next_index() -> int | None:
        return next(counter, None)

    started = time.perf_counter()
    await asyncio.gather(*(_worker(pool, slot, make, next_index, result) for slot in range(workers)))
    result.wall_s = time.perf_counter() - started
    return result


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile, ``q`` in [0, 100]."""
    if not values:
        raise ValueError("no samples")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
