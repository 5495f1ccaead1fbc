"""Sends one request upstream, relays the answer chunk by chunk, and closes the books on it.

:class:`Relay` (the ASGI callable the handler returns) sends a prepared
:class:`~proxy.exchange.Exchange` (:mod:`proxy.replica_send`) while the store look-up runs,
awaits that look-up before the head, then relays each raw chunk as it arrives (whole SSE events
in edit mode), feeding a copy to the usage tap. It reads ahead a Gemini cache refusal (resent once)
and an Anthropic provider miss reason (:mod:`proxy.read_ahead`), and ends early on a client gone
(499), an upstream broken off, or a shutdown cut (503); the exchange is recorded exactly once.
It does not choose what to send upstream and keeps no exchange beyond its own response.
See docs/request-path.md (the relay; how a request ends early) and docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable
from typing import TYPE_CHECKING, cast

import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from proxy import errors
from proxy.exchange import Exchange
from proxy.gemini_cache.hook import MAX_ERROR_BODY
from proxy.headers import has_no_body, response_headers
from proxy.provider_diagnostics import HEADER as PROVIDER_HEADER
from proxy.provider_diagnostics import names_previous
from proxy.read_ahead import ReadAhead, peek_diagnostics, read_at_most
from proxy.replica_send import close_ticket, send_exchange
from proxy.server.aborts import ShutdownCut, UpstreamFailed
from proxy.transport.upstream import UpstreamError
from proxy.usage_tap import SSETap, Tap, tap_for

if TYPE_CHECKING:
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.relay")
CLIENT_CLOSED = errors.CLIENT_GONE.status


class Relay:
    """One exchange's way upstream and back; an ASGI callable (``await relay(scope, receive, send)``).

    ``record`` is the exchange's, kept at hand (read per chunk); ``response`` the upstream's answer
    being relayed; ``status`` the one sent to the client (the upstream's); ``ahead`` the body bytes
    read before the status line went out. ``_started``: the status line has gone to the client;
    ``_complete``: the last byte has, so a disconnect from then on is the normal end."""

    def __init__(self, exchange: Exchange, gate: Gate) -> None:
        self.exchange = exchange
        self.gate = gate
        self.record = exchange.record
        self.response: httpx.Response | None = None
        self.tap: Tap | None = None
        self.edit = False
        self.status = 0
        self.ahead: ReadAhead | None = None
        self._started = False
        self._complete = False

    def _first_byte(self) -> None:
        if self.record.ttfb_s is None:
            self.record.ttfb_s = time.perf_counter() - self.exchange.started

    def _body(self, response: httpx.Response) -> AsyncIterable[bytes]:
        return cast("AsyncIterable[bytes]", response.stream) if self.ahead is None else self.ahead.body()

    async def _pump(self, send: Send) -> None:
        """The body, raw bytes as sent (whole SSE events in edit mode; none at all, though read
        to the end, for a status without a body or a HEAD), a copy to the tap."""
        response, tap = self.response, self.tap
        assert response is not None and tap is not None
        body = self._body(response)
        if has_no_body(self.status) or self.record.method == "HEAD":
            async for _ in body:
                pass
        elif self.edit:
            assert isinstance(tap, SSETap)
            async for chunk in body:
                out = b"".join(event.raw for event in tap.events(chunk) if tap.keep(event))
                if out:
                    self._first_byte()
                    await send({"type": "http.response.body", "body": out, "more_body": True})
            rest = tap.flush()
            if rest:
                self._first_byte()
                await send({"type": "http.response.body", "body": rest, "more_body": True})
        else:
            async for chunk in body:
                self._first_byte()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                tap.feed(chunk)
        self._first_byte()
        self._complete = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _relay(self, send: Send) -> Response | None:
        """Sends the exchange upstream and relays the answer; returns the proxy's error reply
        instead when the upstream could not be reached."""
        exchange, record, pool = self.exchange, self.record, self.gate.pool
        assert exchange.target is not None and pool is not None
        try:
            self.response = await send_exchange(pool, exchange)
        except UpstreamError as exc:
            return await self._error(exc.error, exc.message)
        if self.gate.gemini_auto_cache.may_refuse(exchange, self.response.status_code):
            reply = await self._resend_if_cache_refused()
            if reply is not None:
                return reply
        self.tap, self.edit = tap_for(exchange, self.response)
        if self.ahead is None and self.response.status_code == 200 and names_previous(exchange):
            self.ahead, value = await peek_diagnostics(self.response)
            if value is not None:
                exchange.headers[PROVIDER_HEADER] = value
        if exchange.lookup is not None:
            # the prefix headers: the store's answer, or unknown at its deadline
            await exchange.lookup.result()
        self.status = record.status = self.response.status_code
        extra = [(k.encode(), v.encode()) for k, v in exchange.headers.items()]
        headers = (
            response_headers(self.response.headers.raw, keep_length=not self.edit, status=self.status) + extra
        )
        self._started = True
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await self._pump(send)
        return None

    async def _resend_if_cache_refused(self) -> Response | None:
        """A rewritten exchange answered 400 / 403 / 404: reads up to MAX_ERROR_BODY of the
        error (nothing has gone to the client yet). When the auto-cache's hook says it names
        the cachedContent, the answer is dropped and the body as sent goes upstream once
        instead; otherwise what was read is relayed first, then the rest. Returns the proxy's
        error reply (a clear error, not a cut connection: nothing went out yet) when the error
        broke off or the resend could not reach the upstream."""
        exchange, first, auto = self.exchange, self.response, self.gate.gemini_auto_cache
        assert first is not None and exchange.target is not None
        try:
            ahead = await read_at_most(first, MAX_ERROR_BODY)
        except (httpx.TransportError, OSError) as exc:
            return await self._error(
                errors.broken_off(exc),
                f"reading the upstream's {first.status_code} failed: {type(exc).__name__}",
            )
        if not auto.is_refusal(
            first.status_code, b"".join(ahead.head), first.headers.get("content-encoding")
        ):
            self.ahead = ahead
            return None
        self.response = None
        # reused if the refusal was read to the end, else closed; then the body as sent, once
        await first.aclose()
        auto.resend(exchange)
        assert self.gate.pool is not None and exchange.upstream_headers is not None
        try:
            self.response = await send_exchange(self.gate.pool, exchange)
        except UpstreamError as exc:
            return await self._error(exc.error, exc.message)
        return None

    async def _error(self, error: errors.ProxyError, message: str) -> Response:
        """The proxy's own error reply (nothing went out yet), with the look-up's prefix headers."""
        exchange, record = self.exchange, self.record
        if exchange.lookup is not None:
            await exchange.lookup.result()
        errors.record_failure(record, error)
        return errors.error_response(record.provider, error, message, exchange.headers)

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
                    if not self._complete:
                        # interrupts the relay wherever it waits, the upstream included
                        client_gone = True
                        task.cancel()
                    return

        watcher = asyncio.get_running_loop().create_task(watch_disconnect())
        try:
            try:
                error_reply = await self._relay(send)
            except (httpx.TransportError, OSError) as exc:
                failure = exc
                errors.record_failure(record, errors.broken_off(exc), keep_status=True)
            except asyncio.CancelledError as exc:
                if not client_gone:
                    # cancelled from outside (the server's shutdown): recorded, then re-raised
                    cut = exc
                else:
                    task.uncancel()
            finally:
                watcher.cancel()
            if error_reply is not None and not client_gone:
                try:
                    await error_reply(scope, receive, send)
                except asyncio.CancelledError:
                    # the shutdown cut the error reply itself: the record keeps it
                    log.warning("request %s cut by shutdown", record.request_id)
                    raise ShutdownCut(f"request {record.request_id} cut by shutdown") from None
        finally:
            try:
                # a read the peek left under way that nobody awaited (client gone, send failed); the
                # connection closed unless read to the end
                if self.ahead is not None:
                    self.ahead.drop()
                if self.response is not None:
                    await self.response.aclose()
            finally:
                self._close_books(client_gone and error_reply is None, cut is not None, failure)
        if cut is not None:
            await self._cut(scope, receive, send)
        if failure is not None:
            # Headers are gone already: abort the connection so the client sees a truncated
            # body, not a complete-looking one.
            message = f"upstream failed mid-response on request {record.request_id}: {type(failure).__name__}"
            log.warning("%s", message)
            raise UpstreamFailed(message)

    def _close_books(self, client_gone: bool, cut: bool, failure: BaseException | None = None) -> None:
        """The record's last fields, the pool's books on its replica (``failure``: the answer broke
        off, the replica's fault; a client gone or a cut is not), then the recorder: exactly once,
        whatever happened (a look-up not awaited, as the client left, the request was cut or
        failed first, is cancelled; a tap that fails never loses the record)."""
        record, exchange = self.record, self.exchange
        if client_gone:
            errors.record_failure(record, errors.CLIENT_GONE, keep_error=True)
        elif cut:
            errors.record_failure(record, errors.SHUTDOWN_CUT)
        if exchange.lookup is not None:
            exchange.lookup.close()
        record.latency_s = time.perf_counter() - exchange.started
        try:
            record.usage = self.tap.usage() if self.tap is not None else None
            if self.tap is not None:
                record.response_id = self.tap.response_id
                exchange.diagnostics = self.tap.diagnostics
        except Exception:
            log.exception("usage tap failed on request %s", record.request_id)
        close_ticket(exchange, None if failure is None else f"answer broke off: {type(failure).__name__}")
        self.gate.finish(exchange)

    async def _cut(self, scope: Scope, receive: Receive, send: Send) -> None:
        """After the record is written: tell a client still waiting for the status line (best
        effort: it may be gone too), log one line, and let the cancellation go on."""
        record = self.record
        if not self._started:
            reply = errors.error_response(
                record.provider,
                errors.SHUTDOWN_CUT,
                "the proxy is shutting down; retry",
                self.exchange.headers,
            )
            try:
                await reply(scope, receive, send)
            except Exception:
                pass
        log.warning("request %s cut by shutdown", record.request_id)
        raise ShutdownCut(f"request {record.request_id} cut by shutdown")
