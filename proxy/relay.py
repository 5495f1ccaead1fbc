"""Sends one request upstream, relays the answer chunk by chunk, and closes the books on it.

:class:`Relay` is an ASGI response. It opens the upstream exchange (a 502/504 there becomes
the proxy's own error in the provider's shape), then sends the upstream's status and
headers (plus the ``x-prefixgate-*`` ones, all known before the first byte), then each raw
chunk as soon as it arrives (never buffered), feeding a copy to a usage tap
(:mod:`proxy.usage_tap`) after the client has it. In *edit* mode (the proxy asked an OpenAI stream for usage the
client did not want) it forwards whole SSE events instead and drops the extra usage
chunk; every other byte is unchanged.

From the moment the request is sent upstream it listens for the client going away
(while the upstream is still thinking, too); then it stops, closes the upstream
connection (so the upstream sees its request abandoned) and records status 499. The
upstream response is closed and the record handed to the recorder exactly once, whatever
happens. How a relay ends early:

- **client gone**: status 499, error ``client_disconnected``;
- **upstream fails after the status line went out**: the upstream status stays, error
  ``upstream_read_error`` / ``upstream_timeout``; one WARNING line with the request id,
  then :class:`~proxy.server.aborts.UpstreamFailed` makes uvicorn abort the connection, so the
  client sees a truncated body, never a complete-looking one (no traceback: see
  :mod:`proxy.server.aborts`);
- **cut by the server's shutdown** (the task cancelled once ``--shutdown-timeout`` ran
  out, or at a second Ctrl-C: :mod:`proxy.server.shutdown`): status 503, error
  ``shutdown_cut`` (the upstream status is not kept: the exchange did not complete, as
  with 499); a client still waiting for the status line gets a 503 in the provider's
  shape (SDKs retry it), one already reading a body gets an aborted connection; one
  WARNING line, then :class:`~proxy.server.aborts.ShutdownCut` (a cancellation) is raised.

Statuses without a body (1xx, 204, 304) and answers to ``HEAD`` send no body bytes, even
if the upstream sent some. This module does not choose what to send upstream.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable

import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from proxy import errors
from proxy.server.aborts import ShutdownCut, UpstreamFailed
from proxy.headers import has_no_body, response_headers
from proxy.accounting.records import RequestRecord
from proxy.transport.upstream import UpstreamError
from proxy.usage_tap import JSONTap, SSETap

Tap = JSONTap | SSETap

log = logging.getLogger("prefixgate.relay")
CLIENT_CLOSED = 499


class Relay(Response):
    def __init__(
        self,
        open_upstream: Callable[[], Awaitable[httpx.Response]],
        choose_tap: Callable[[httpx.Response], tuple[Tap, bool]],
        record: RequestRecord,
        finish: Callable[[RequestRecord], None],
        extra_headers: dict[str, str],
        started: float,
    ) -> None:
        self.open_upstream = open_upstream
        self.choose_tap = choose_tap
        self.record = record
        self.finish = finish
        self.extra_headers = extra_headers
        self.started = started
        self.upstream: httpx.Response | None = None
        self.tap: Tap | None = None
        self.edit = False
        self.status_code = 0
        self.background = None
        self._started = False  # the status line has gone to the client
        self._complete = False

    def _first_byte(self) -> None:
        if self.record.ttfb_s is None:
            self.record.ttfb_s = time.perf_counter() - self.started

    async def _pump(self, send: Send) -> None:
        upstream, tap = self.upstream, self.tap
        assert upstream is not None and tap is not None
        if has_no_body(self.status_code) or self.record.method == "HEAD":
            async for _ in upstream.stream:  # type: ignore[union-attr]  # read to the end, send nothing
                pass
        elif self.edit:
            assert isinstance(tap, SSETap)
            async for chunk in upstream.stream:  # type: ignore[union-attr]  # raw bytes, as sent
                out = b"".join(event.raw for event in tap.events(chunk) if tap.keep(event))
                if out:
                    self._first_byte()
                    await send({"type": "http.response.body", "body": out, "more_body": True})
            rest = tap.flush()
            if rest:
                self._first_byte()
                await send({"type": "http.response.body", "body": rest, "more_body": True})
        else:
            async for chunk in upstream.stream:  # type: ignore[union-attr]  # raw bytes, as sent
                self._first_byte()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                tap.feed(chunk)
        self._first_byte()
        self._complete = True  # a disconnect from here on is the normal end, not a client gone
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _relay(self, send: Send) -> Response | None:
        """Opens the exchange and relays it; returns the proxy's error reply instead when
        the upstream could not be reached."""
        record = self.record
        try:
            self.upstream = await self.open_upstream()
        except UpstreamError as exc:
            record.status, record.error = exc.error.status, exc.error.kind
            return errors.error_response(record.provider, exc.error, exc.message, self.extra_headers)
        self.tap, self.edit = self.choose_tap(self.upstream)
        self.status_code = record.status = self.upstream.status_code
        extra = [(k.encode(), v.encode()) for k, v in self.extra_headers.items()]
        headers = response_headers(self.upstream.headers.raw, keep_length=not self.edit, status=self.status_code) + extra
        self._started = True
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        await self._pump(send)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        record = self.record
        task = asyncio.current_task()
        assert task is not None
        client_gone = False
        failure: BaseException | None = None
        cut: asyncio.CancelledError | None = None
        error_reply: Response | None = None

        async def watch_disconnect() -> None:
            # A plain asyncio task, not an anyio task group: that costs ~0.1 ms per request.
            nonlocal client_gone
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    if not self._complete:  # after the last byte a disconnect is the normal end
                        client_gone = True
                        task.cancel()  # interrupts the relay wherever it waits (upstream included)
                    return

        watcher = asyncio.get_running_loop().create_task(watch_disconnect())
        try:
            try:
                error_reply = await self._relay(send)
            except (httpx.TransportError, OSError) as exc:
                failure = exc
                record.error = "upstream_timeout" if isinstance(exc, httpx.TimeoutException) else "upstream_read_error"
            except asyncio.CancelledError as exc:
                if not client_gone:
                    cut = exc  # cancelled from outside (server shutdown): recorded, then re-raised
                else:
                    task.uncancel()
            finally:
                watcher.cancel()
            if error_reply is not None and not client_gone:
                try:
                    await error_reply(scope, receive, send)
                except asyncio.CancelledError:  # shutdown cut the error reply itself: the record keeps it
                    log.warning("request %s cut by shutdown", record.request_id)
                    raise ShutdownCut(f"request {record.request_id} cut by shutdown") from None
        finally:
            try:
                if self.upstream is not None:
                    await self.upstream.aclose()  # closes the connection unless read to the end
            finally:
                if client_gone and error_reply is None:
                    record.status = CLIENT_CLOSED
                    record.error = record.error or "client_disconnected"
                elif cut is not None:
                    record.status, record.error = errors.SHUTDOWN_CUT.status, errors.SHUTDOWN_CUT.kind
                record.latency_s = time.perf_counter() - self.started
                try:
                    record.usage = self.tap.usage() if self.tap is not None else None
                except Exception:  # a tap must never lose the record
                    log.exception("usage tap failed on request %s", record.request_id)
                self.finish(record)
        if cut is not None:
            await self._cut(scope, receive, send)
        if failure is not None:
            # Headers are gone already: abort the connection so the client sees a truncated
            # body, not a complete-looking one.
            message = f"upstream failed mid-response on request {record.request_id}: {type(failure).__name__}"
            log.warning("%s", message)
            raise UpstreamFailed(message)

    async def _cut(self, scope: Scope, receive: Receive, send: Send) -> None:
        """After the record is written: tell a client still waiting for the status line
        (best effort), log one line, and let the cancellation go on."""
        record = self.record
        if not self._started:
            reply = errors.error_response(record.provider, errors.SHUTDOWN_CUT, "the proxy is shutting down; retry", self.extra_headers)
            try:
                await reply(scope, receive, send)
            except Exception:  # the client may be gone too; the record is what matters
                pass
        log.warning("request %s cut by shutdown", record.request_id)
        raise ShutdownCut(f"request {record.request_id} cut by shutdown")
