"""A scripted loopback HTTP server and a fetch helper for the upstream pool's tests."""

from __future__ import annotations

import asyncio

import httpx

from proxy.transport import H1Transport

TIMEOUT = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}


class Scripted:
    """A loopback server answering each request with the next scripted reply.

    A reply is bytes, or a list of (bytes, delay_s) pieces; ``None`` closes the connection
    without answering. ``close_after`` closes each connection after that many replies."""

    def __init__(self, replies, close_after: int | None = None):
        self.replies = list(replies)
        self.close_after = close_after
        self.connections = 0
        self.requests: list[bytes] = []
        self.eof_seen = asyncio.Event()

    async def handle(self, reader, writer):
        self.connections += 1
        served = 0
        try:
            while self.replies:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    self.eof_seen.set()
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                reply = self.replies.pop(0)
                if reply is None:
                    return
                for piece, delay in reply if isinstance(reply, list) else [(reply, 0)]:
                    await asyncio.sleep(delay)
                    writer.write(piece)
                    await writer.drain()
                served += 1
                if self.close_after and served >= self.close_after:
                    return
            if await reader.read(1) == b"":
                self.eof_seen.set()
        finally:
            writer.close()

    async def __aenter__(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await asyncio.sleep(0)


async def fetch(t: H1Transport, url: str, method="POST", body=b"{}", headers=None, timeout=TIMEOUT):
    req = httpx.Request(method, url, headers=headers or {}, content=body, extensions={"timeout": timeout})
    resp = await t.handle_async_request(req)
    try:
        chunks = [c async for c in resp.stream]
    finally:
        await resp.stream.aclose()
    return resp, chunks


def run(coro):
    return asyncio.run(coro)
