"""The upstream connection pool: :class:`H1Transport`, an ``httpx.AsyncBaseTransport``.

Writes head and body in one send and returns an ``httpx.Response`` once the head is in,
streaming the body. Per-origin LIFO idle pools, ``max_connections``, httpx timeouts and
errors; a reused connection that fails before any response byte within ``stale_window_s``
is retried once on a fresh one. Parsing is :mod:`.response_parser`, reuse :mod:`.reuse`.

It does not support HTTP/2, proxies or upgrades; a streamed request body is read into
memory first. See docs/request-path.md.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import defaultdict

import httpx

from proxy.transport.connection import Connection
from proxy.transport.response_parser import ResponseBody, ResponseParser
from proxy.transport.reuse import may_checkout, may_release


def _ssl_context() -> ssl.SSLContext:
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover
        return ssl.create_default_context()


def request_head(method: str, url: httpx.URL, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The request line and headers, refusing CR, LF or NUL anywhere (header injection)."""
    target = url.raw_path or b"/"
    if any(c in target for c in b"\r\n\x00 "):
        raise httpx.LocalProtocolError("request target contains CR, LF, NUL or a space")
    lines = [method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    for name, value in headers:
        if (
            b"\r" in value
            or b"\n" in value
            or b"\x00" in value
            or not name
            or any(c in name for c in b"\r\n\x00: \t")
        ):
            raise httpx.LocalProtocolError("header name or value contains CR, LF, NUL or ':'")
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Stale(Exception):
    """A reused connection turned out closed before any response byte, right after the
    request was sent: retry on a new one."""


class H1Transport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        max_connections: int = 512,
        keepalive_expiry: float = 60.0,
        ssl_context: ssl.SSLContext | None = None,
        stale_window_s: float = 1.0,
    ) -> None:
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self.stale_window_s = stale_window_s
        self._idle: dict[tuple, list[Connection]] = defaultdict(list)
        #: connections in the idle lists (some may have been closed by their server meanwhile)
        self._idle_count = 0
        self._slots = asyncio.Semaphore(max_connections) if max_connections else None
        #: exchanges holding a slot (each on one connection)
        self.in_use = 0
        #: sends waiting for a slot now; since start: sends that waited, sends that gave up
        self.waiting = self.waited = self.exhausted = 0
        #: None: certifi's CA bundle, verification on
        self._ssl = ssl_context
        #: responses still open close their connections when done
        self._closed = False

    # -- pool -------------------------------------------------------------------------------

    def _done(self, origin: tuple, conn: Connection, parser: ResponseParser) -> None:
        """The response was closed (read to the end or not): reuse or close, then free the slot."""
        conn.parser = None
        if may_release(conn, parser) and not self._closed:
            conn.idle_since = time.monotonic()
            conn.reused = True
            self._idle[origin].append(conn)
            self._idle_count += 1
        else:
            conn.kill()
        self._forget()

    def _forget(self) -> None:
        self.in_use -= 1
        if self._slots is not None:
            self._slots.release()

    async def _acquire_slot(self, pool_timeout: float | None) -> None:
        """A slot for one exchange, waiting at most ``pool_timeout`` for one to free up (its own
        deadline, apart from connecting): past it ``httpx.PoolTimeout``, counted."""
        if self._slots is not None:
            if self._slots.locked():
                self.waiting += 1
                self.waited += 1
                try:
                    async with asyncio.timeout(pool_timeout):
                        await self._slots.acquire()
                except TimeoutError:
                    self.exhausted += 1
                    raise httpx.PoolTimeout(
                        f"all {self.max_connections} upstream connections stayed busy for {pool_timeout:g} s"
                    ) from None
                finally:
                    self.waiting -= 1
            else:
                await self._slots.acquire()
        self.in_use += 1

    def _make_room(self) -> None:
        """Before a new connection: close the oldest idle ones while busy plus idle would pass
        ``max_connections`` (the pool bounds the sockets it holds, not only those in use)."""
        while (
            self.max_connections
            and self._idle_count
            and self.in_use + self._idle_count > self.max_connections
        ):
            oldest = min(
                (conns for conns in self._idle.values() if conns), key=lambda conns: conns[0].idle_since
            )
            oldest.pop(0).kill()
            self._idle_count -= 1

    def stats(self) -> dict[str, int]:
        """The pool now, for ``/prefixgate/health`` and metrics: its size, slots in use, open
        idle connections, sends waiting for a slot; since start, sends that waited and sends
        that gave up (``pool_exhausted``)."""
        idle = sum(
            1
            for conns in self._idle.values()
            for c in conns
            if not c.dead and c.transport is not None and not c.transport.is_closing()
        )
        return {
            "max_connections": self.max_connections,
            "in_use": self.in_use,
            "idle": idle,
            "waiting": self.waiting,
            "waited_total": self.waited,
            "exhausted_total": self.exhausted,
        }

    def _idle_conn(self, origin: tuple) -> Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            if may_checkout(conn, now, self.keepalive_expiry):
                return conn
            conn.kill()
        return None

    async def _connect(self, url: httpx.URL, timeout: float | None) -> Connection:
        tls = url.scheme == "https"
        if tls and self._ssl is None:
            self._ssl = _ssl_context()
        port = url.port or (443 if tls else 80)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(
                    Connection,
                    url.host,
                    port,
                    ssl=self._ssl if tls else None,
                    server_hostname=url.host if tls else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"timed out connecting to {url.host}:{port}") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(
                f"could not connect to {url.host}:{port}: {type(exc).__name__}"
            ) from None
        return conn

    # -- one exchange -----------------------------------------------------------------------

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.ByteStream):
            await request.aread()
        response = await self.send(
            request.method,
            request.url,
            request.headers.raw,
            request.content or b"",
            request.extensions.get("timeout") or {},
        )
        response.request = request
        return response

    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        """The exchange without an ``httpx.Request`` (building one costs more than the rest of
        this method): ``headers`` go on the wire as given, so they must already hold ``Host``
        and, with a body, ``Content-Length``."""
        origin = (url.scheme, url.host, url.port)
        payload = request_head(method, url, headers) + body
        await self._acquire_slot(timeouts.get("pool"))
        conn: Connection | None = None
        try:
            conn = self._idle_conn(origin)
            for attempt in (0, 1):
                if conn is None:
                    self._make_room()
                    conn = await self._connect(url, timeouts.get("connect"))
                try:
                    return await self._exchange(method, origin, conn, payload, timeouts)
                except _Stale:
                    conn.kill()
                    conn = None
                    if attempt:
                        raise httpx.RemoteProtocolError(
                            "upstream closed the connection without a response"
                        ) from None
        except BaseException:
            # an error or a cancellation: the half-used connection is never reused
            if conn is not None:
                conn.parser = None
                conn.kill()
            self._forget()
            raise
        raise AssertionError("unreachable")

    async def _exchange(
        self, method: str, origin: tuple, conn: Connection, payload: bytes, timeouts: dict
    ) -> httpx.Response:
        reused = conn.reused
        parser = conn.start(method)
        sent_at = time.monotonic()
        try:
            await conn.write(payload, timeouts.get("write"))
        except (ConnectionError, OSError) as exc:
            if reused and parser.received == 0 and time.monotonic() - sent_at < self.stale_window_s:
                raise _Stale from None
            raise httpx.WriteError(
                f"upstream connection failed while sending: {type(exc).__name__}"
            ) from None
        try:
            await parser.head(timeouts.get("read"))
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if reused and parser.received == 0 and time.monotonic() - sent_at < self.stale_window_s:
                raise _Stale from None
            raise
        body = ResponseBody(parser, lambda ex: self._done(origin, conn, ex), timeouts.get("read"))
        return httpx.Response(
            parser.status, headers=parser.headers, stream=body, extensions={"http_version": parser.version}
        )

    async def aclose(self) -> None:
        self._closed = True
        for conns in self._idle.values():
            for conn in conns:
                conn.kill()
        self._idle.clear()
        self._idle_count = 0
