"""Sends one request upstream, relays the answer chunk by chunk, and closes the books on it.

:class:`Relay` is an ASGI response over one :class:`~proxy.exchange.Exchange` (what the
handler prepared: target, upstream headers and body, record, ``x-prefixgate-*`` headers).
It sends the request through the gate's upstream pool (a 502/504 there becomes the
proxy's own error in the provider's shape) while the prefix store's look-up
(:class:`~proxy.exchange.Lookup`, started by the handler) is still in flight, awaits that
look-up (bounded by the store's deadline) right before a response head goes out, then sends the
upstream's status and headers (plus the ``x-prefixgate-*`` ones, all known before the first
byte), then each raw chunk
as soon as it arrives (never buffered), feeding a copy to the usage tap
:func:`proxy.usage_tap.tap_for` picked from the exchange, after the client has it. In
*edit* mode (the proxy asked an OpenAI stream for usage the client did not want) it
forwards whole SSE events instead and drops the extra usage chunk; every other byte is
unchanged.

From the moment the request is sent upstream it listens for the client going away
(while the upstream is still thinking, too); then it stops, closes the upstream
connection (so the upstream sees its request abandoned) and records status 499. A
look-up still in flight when the relay ends (client gone, shutdown cut) is cancelled, its
prefix unknown. The upstream response is closed and the exchange handed to the recorder
(:meth:`proxy.gate.Gate.finish`) exactly once, whatever happens. How a relay ends early:

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

**A cache refusal is resent** (:mod:`proxy.gemini_cache.resend`): when the Gemini auto-cache
rewrote the body (the exchange's ``fallback_body`` is set) and the upstream answers 400 / 403 /
404, the relay reads at most 64 KiB of that error before the status line goes out (streaming
or not: Google sends an error's status before any event); if it names the ``cachedContent``,
that answer is dropped, the auto-cache drops its entry
(:meth:`~proxy.gemini_cache.manager.GeminiAutoCache.refused`), the body as the client sent it
goes upstream once, and the client gets that answer (one record, marked
``gemini-cached-content-resent``). Any other error is
relayed as it came, the bytes read first included; one that breaks off while those bytes are
read is the proxy's 502 ``upstream_read_error`` (504 on a timeout): nothing had gone out. An
error inside a stream that already began cannot be taken back and passes through.

**The provider's miss reason goes out in the head** (:mod:`proxy.provider_diagnostics`): when
the request sent upstream names ``diagnostics.previous_message_id`` (Anthropic Messages) and
the answer is a 200, the relay reads it ahead before the status line (a JSON body whole, up
to 4 MiB; a stream up to its first complete event, ``message_start``, up to 64 KiB and 0.5 s:
a later first event leaves the header off and the head goes out, the read still under way) and
adds ``x-prefixgate-provider-miss-reason: TYPE; tokens=N`` when it names one. Every byte read is
relayed after the head as it came; a read that breaks off meanwhile fails the body just where
it would have without the read-ahead. Other requests pay nothing.

Statuses without a body (1xx, 204, 304) and answers to ``HEAD`` send no body bytes, even
if the upstream sent some. This module does not choose what to send upstream, and keeps
no exchange beyond its own response.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from proxy import errors
from proxy.exchange import Exchange
from proxy.gemini_cache.resend import (
    MAX_ERROR_BODY,
    mark_resent,
    may_be_refusal,
    names_cached_content,
)
from proxy.headers import has_no_body, response_headers
from proxy.provider_diagnostics import HEADER as PROVIDER_HEADER
from proxy.provider_diagnostics import MAX_SSE_WAIT_S, Peek, header_value, names_previous
from proxy.server.aborts import ShutdownCut, UpstreamFailed
from proxy.transport.upstream import UpstreamError
from proxy.usage_tap import SSETap, Tap, tap_for

if TYPE_CHECKING:
    from proxy.gate import Gate

_READ_ERROR = errors.ProxyError(502, "upstream_read_error", "api_error", "api_error")  # an error body broke off before any byte went out
log = logging.getLogger("prefixgate.relay")
CLIENT_CLOSED = 499


async def _next_chunk(body: AsyncIterator[bytes]) -> bytes | None:
    """The next chunk of ``body``; None at its end (a task cannot end in StopAsyncIteration)."""
    try:
        return await body.__anext__()
    except StopAsyncIteration:
        return None


def _drop(read: asyncio.Task | None) -> None:
    """Cancels a read still under way; marks a finished one's error as seen."""
    if read is None:
        return
    if not read.done():
        read.cancel()
    elif not read.cancelled():
        read.exception()


class Relay(Response):
    def __init__(self, exchange: Exchange, gate: Gate) -> None:
        self.exchange = exchange
        self.gate = gate
        self.record = exchange.record  # read per chunk (first byte): one attribute hop
        self.upstream: httpx.Response | None = None
        self.tap: Tap | None = None
        self.edit = False
        self.status_code = 0
        self.background = None
        self._started = False  # the status line has gone to the client
        self._complete = False
        self._head: list[bytes] | None = None  # body chunks read before the status line went out (a refusal check)
        self._rest: AsyncIterator[bytes] | None = None  # the body after them; None: _head is all of it
        self._failed: BaseException | None = None  # the read that broke off while reading ahead: raised after _head
        self._pending: asyncio.Task[bytes | None] | None = None  # a read the peek's deadline left under way: its chunk follows _head

    def _first_byte(self) -> None:
        if self.record.ttfb_s is None:
            self.record.ttfb_s = time.perf_counter() - self.exchange.started

    def _body(self, upstream: httpx.Response) -> AsyncIterable[bytes]:
        return upstream.stream if self._head is None else self._read_ahead()  # type: ignore[return-value]

    async def _read_ahead(self) -> AsyncIterator[bytes]:
        assert self._head is not None
        for chunk in self._head:
            yield chunk
        if self._pending is not None:  # the read the peek left under way (awaiting it cancels it with this task)
            pending, self._pending = self._pending, None
            chunk = await pending  # its error, if any, is raised here: where the body would have failed
            if chunk is None:
                return
            yield chunk
        if self._rest is not None:
            async for chunk in self._rest:
                yield chunk
        if self._failed is not None:
            raise self._failed

    async def _pump(self, send: Send) -> None:
        upstream, tap = self.upstream, self.tap
        assert upstream is not None and tap is not None
        body = self._body(upstream)
        if has_no_body(self.status_code) or self.record.method == "HEAD":
            async for _ in body:  # read to the end, send nothing
                pass
        elif self.edit:
            assert isinstance(tap, SSETap)
            async for chunk in body:  # raw bytes, as sent
                out = b"".join(event.raw for event in tap.events(chunk) if tap.keep(event))
                if out:
                    self._first_byte()
                    await send({"type": "http.response.body", "body": out, "more_body": True})
            rest = tap.flush()
            if rest:
                self._first_byte()
                await send({"type": "http.response.body", "body": rest, "more_body": True})
        else:
            async for chunk in body:  # raw bytes, as sent
                self._first_byte()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                tap.feed(chunk)
        self._first_byte()
        self._complete = True  # a disconnect from here on is the normal end, not a client gone
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _relay(self, send: Send) -> Response | None:
        """Sends the exchange upstream and relays the answer; returns the proxy's error reply
        instead when the upstream could not be reached."""
        exchange, record, upstream = self.exchange, self.record, self.gate.upstream
        assert exchange.target is not None and exchange.upstream_headers is not None and upstream is not None
        try:
            self.upstream = await upstream.send(record.method, exchange.target.url, exchange.upstream_headers, exchange.upstream_body)
        except UpstreamError as exc:
            return await self._error(exc.error, exc.message)
        if exchange.fallback_body is not None and may_be_refusal(self.upstream.status_code):
            reply = await self._resend_if_cache_refused()
            if reply is not None:
                return reply
        self.tap, self.edit = tap_for(exchange, self.upstream)
        if self._head is None and self.upstream.status_code == 200 and names_previous(exchange):
            await self._peek_diagnostics()
        if exchange.lookup is not None:
            await exchange.lookup.result()  # the prefix headers: the store's answer, or unknown at its deadline
        self.status_code = record.status = self.upstream.status_code
        extra = [(k.encode(), v.encode()) for k, v in exchange.headers.items()]
        headers = response_headers(self.upstream.headers.raw, keep_length=not self.edit, status=self.status_code) + extra
        self._started = True
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        await self._pump(send)
        return None

    async def _peek_diagnostics(self) -> None:
        """The request named a previous message: reads the answer ahead (a JSON body whole, a
        stream to its first event; bounded, :class:`~proxy.provider_diagnostics.Peek`, a stream
        also in time: :data:`~proxy.provider_diagnostics.MAX_SSE_WAIT_S`) so the provider's miss
        reason goes out in the head. What was read is relayed first, unchanged; a read still
        under way at the deadline goes on and its chunk follows (``_pending``); a read that
        fails is raised where the body would have failed without the peek."""
        first = self.upstream
        assert first is not None
        peek = Peek(first.headers.get("content-type", ""), first.headers.get("content-encoding"))
        rest: AsyncIterator[bytes] | None = first.stream.__aiter__()  # type: ignore[union-attr]
        head: list[bytes] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MAX_SSE_WAIT_S if peek.stream else None
        while not peek.done:
            try:
                if deadline is None:
                    chunk = await rest.__anext__()  # type: ignore[union-attr]
                else:
                    read = loop.create_task(_next_chunk(rest))  # type: ignore[arg-type]
                    try:
                        await asyncio.wait((read,), timeout=max(0.0, deadline - loop.time()))
                    except BaseException:  # the client went away (or a shutdown cut): the read stops too
                        read.cancel()
                        raise
                    if not read.done():  # the first event is late: the head goes out without the header
                        self._pending = read
                        break
                    got = read.result()
                    if got is None:
                        raise StopAsyncIteration
                    chunk = got
            except StopAsyncIteration:
                rest = None
                peek.end()
                break
            except (httpx.TransportError, OSError) as exc:  # relayed as it would have been: after the bytes before it
                self._failed, rest = exc, None
                break
            head.append(chunk)
            peek.feed(chunk)
        self._head, self._rest = head, rest
        value = header_value(peek.reason)
        if value is not None:
            self.exchange.headers[PROVIDER_HEADER] = value

    async def _resend_if_cache_refused(self) -> Response | None:
        """A rewritten exchange answered 400 / 403 / 404: reads up to MAX_ERROR_BODY of the
        error (nothing has gone to the client yet). When it names the cachedContent, the
        answer is dropped and the body as sent goes upstream once instead (the record gets
        the resent mark); otherwise what was read is relayed first, then the rest. Returns
        the proxy's error reply when the resend could not reach the upstream."""
        exchange, record, first = self.exchange, self.record, self.upstream
        assert first is not None and exchange.fallback_body is not None and exchange.target is not None
        rest: AsyncIterator[bytes] | None = first.stream.__aiter__()  # type: ignore[union-attr]
        head: list[bytes] = []
        size = 0
        while size <= MAX_ERROR_BODY:
            try:
                chunk = await rest.__anext__()  # type: ignore[union-attr]
            except StopAsyncIteration:
                rest = None
                break
            except (httpx.TransportError, OSError) as exc:  # nothing went out yet: a clear error, not a cut connection
                error = errors.UPSTREAM_TIMEOUT if isinstance(exc, httpx.TimeoutException) else _READ_ERROR
                return await self._error(error, f"reading the upstream's {first.status_code} failed: {type(exc).__name__}")
            head.append(chunk)
            size += len(chunk)
        if not names_cached_content(first.status_code, b"".join(head), first.headers.get("content-encoding")):
            self._head, self._rest = head, rest
            return None
        self.upstream = None
        await first.aclose()  # read to the end: the connection may be reused; else closed
        mark_resent(exchange)
        exchange.upstream_body, exchange.fallback_body = exchange.fallback_body, None  # once
        auto = self.gate.gemini_cache
        if auto is not None:
            try:
                auto.refused(record.request_id)  # drops the entry now: concurrent requests go as sent
            except Exception:  # advice: the resend goes on
                log.exception("gemini auto-cache failed to drop the entry of request %s", record.request_id)
        assert self.gate.upstream is not None and exchange.upstream_headers is not None
        try:
            self.upstream = await self.gate.upstream.send(record.method, exchange.target.url, exchange.upstream_headers, exchange.upstream_body)
        except UpstreamError as exc:
            return await self._error(exc.error, exc.message)
        return None

    async def _error(self, error: errors.ProxyError, message: str) -> Response:
        """The proxy's own error reply (nothing went out yet), with the look-up's prefix headers."""
        exchange, record = self.exchange, self.record
        if exchange.lookup is not None:
            await exchange.lookup.result()
        record.status, record.error = error.status, error.kind
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
                _drop(self._pending)  # a read the peek left under way that nobody awaited (client gone, send failed)
                if self.upstream is not None:
                    await self.upstream.aclose()  # closes the connection unless read to the end
            finally:
                if client_gone and error_reply is None:
                    record.status = CLIENT_CLOSED
                    record.error = record.error or "client_disconnected"
                elif cut is not None:
                    record.status, record.error = errors.SHUTDOWN_CUT.status, errors.SHUTDOWN_CUT.kind
                if self.exchange.lookup is not None:  # client gone, cut or failed before its answer was awaited: cancelled
                    self.exchange.lookup.close()
                record.latency_s = time.perf_counter() - self.exchange.started
                try:
                    record.usage = self.tap.usage() if self.tap is not None else None
                    if self.tap is not None:
                        record.response_id = self.tap.response_id
                        self.exchange.diagnostics = self.tap.diagnostics
                except Exception:  # a tap must never lose the record
                    log.exception("usage tap failed on request %s", record.request_id)
                self.gate.finish(self.exchange)
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
            reply = errors.error_response(record.provider, errors.SHUTDOWN_CUT, "the proxy is shutting down; retry", self.exchange.headers)
            try:
                await reply(scope, receive, send)
            except Exception:  # the client may be gone too; the record is what matters
                pass
        log.warning("request %s cut by shutdown", record.request_id)
        raise ShutdownCut(f"request {record.request_id} cut by shutdown")
