"""A minimal Redis client for the prefix look-up's hot path: :class:`RespPool`.

One command per round trip over a few pooled asyncio connections, RESP2 parsed in a few
lines, used only by :class:`proxy.store.redis_store.RedisStore`'s look-up and ``PING`` on a
plain ``redis://`` URL; it exists because redis-py costs ~100 µs of Python per command.
:func:`pack` builds a command; errors are :class:`RespError` or connection errors.

It does not retry, pipeline, time out calls (:mod:`proxy.store.guard` does) or speak RESP3,
pub/sub or TLS. See docs/store.md.
"""

from __future__ import annotations

import asyncio

Reply = int | bytes | list | None


class RespError(Exception):
    """An error reply from Redis (its text, e.g. ``NOSCRIPT No matching script``)."""


def pack(args: list[bytes]) -> bytes:
    """``args`` as one RESP command (an array of bulk strings)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        parts += (b"$%d\r\n" % len(arg), arg, b"\r\n")
    return b"".join(parts)


async def read_reply(reader: asyncio.StreamReader) -> Reply | RespError:
    """One RESP2 reply; an error reply is returned (not raised) so the caller can reuse the
    connection first. ConnectionError when the stream ends or the reply is not RESP."""
    line = await reader.readuntil(b"\r\n")
    kind, body = line[:1], line[1:-2]
    if kind == b":":
        return int(body)
    if kind == b"+":
        return body
    if kind == b"-":
        return RespError(body.decode("utf-8", "replace"))
    if kind == b"$":
        n = int(body)
        return None if n < 0 else (await reader.readexactly(n + 2))[:-2]
    if kind == b"*":
        n = int(body)
        return None if n < 0 else [await read_reply(reader) for _ in range(n)]
    raise ConnectionError(f"not a RESP reply: {line[:40]!r}")


class RespPool:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        db: int = 0,
        username: str | None = None,
        password: str | None = None,
        connect_timeout_s: float = 2.0,
        max_idle: int = 128,
    ) -> None:
        self.host, self.port, self.db = host, port, db
        self._auth = (
            [b"AUTH", *([username.encode()] if username else []), password.encode()] if password else None
        )
        self.connect_timeout_s = connect_timeout_s
        self.max_idle = max_idle
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._closed = False
        #: connections opened since start
        self.connects = 0

    async def call(self, command: bytes) -> Reply:
        """Send one packed command (:func:`pack`) and return its reply; RespError for an error
        reply. A server gone (or speaking no RESP) likely took its idle peers too: they are
        closed. A connection cancelled or failed mid-command may still get a reply: never reused."""
        conn = self._idle_connection() or await self._connect()
        reader, writer = conn
        reply: Reply | RespError = None
        done = False
        try:
            writer.write(command)
            reply = await read_reply(reader)
            done = True
        except Exception:
            self._drop_idle()
            raise
        finally:
            if done and not self._closed and len(self._idle) < self.max_idle:
                self._idle.append(conn)
            else:
                writer.close()
        if isinstance(reply, RespError):
            raise reply
        return reply

    def _idle_connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """An idle connection the server has not closed meanwhile (a restarted Redis closed them all)."""
        while self._idle:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        return None

    def _drop_idle(self) -> None:
        while self._idle:
            self._idle.pop()[1].close()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._closed:
            raise ConnectionError("the Redis connection pool is closed")
        async with asyncio.timeout(self.connect_timeout_s):
            # asyncio sets TCP_NODELAY
            reader, writer = await asyncio.open_connection(self.host, self.port)
            try:
                for command in ([self._auth] if self._auth else []) + (
                    [[b"SELECT", b"%d" % self.db]] if self.db else []
                ):
                    writer.write(pack(command))
                    reply = await read_reply(reader)
                    if isinstance(reply, RespError):
                        raise ConnectionError(f"Redis refused {command[0].decode()}: {reply}")
            except BaseException:
                writer.close()
                raise
        self.connects += 1
        return reader, writer

    @property
    def idle(self) -> int:
        return len(self._idle)

    async def aclose(self) -> None:
        self._closed = True
        self._drop_idle()
