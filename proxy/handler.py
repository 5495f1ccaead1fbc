"""The proxied endpoints (``/v1/*``, ``/v1beta/*``, ``/NAME/*``): one request from arrival to the
:class:`~proxy.relay.Relay` that sends it.

Route → tenant → :class:`~proxy.exchange.Exchange` → body (bounded) → analyse → rewrite and
the provider-diagnostics ask (:mod:`proxy.request_rewrite`) → the Gemini auto-cache hook → a pool's
routing key → early miss diagnosis → maybe ask a stream for usage → the store look-up → the relay.
Every outcome ends in exactly one record (but an unknown first segment: a 404, no record). The
store, the rewrite and the diagnosis are advice: a failure is logged, the request goes on.
It sends nothing upstream, streams nothing, never reads the path suffix, never logs headers or bodies.
See docs/request-path.md (order of work; how a request ends early) and docs/store.md.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from analyzer.rewrite import MODES
from proxy import errors
from proxy.accounting.records import RequestRecord
from proxy.body_analysis import BIG_BODY, analyse, needs_stream_usage, with_stream_usage
from proxy.endpoints import OPENAI
from proxy.exchange import Exchange
from proxy.headers import request_headers
from proxy.relay import Relay
from proxy.replicas.routing_key import route_of
from proxy.request_rewrite import rewrite_mode, rewrite_step
from proxy.store.lookup import Lookup
from proxy.upstream_urls import BadPath, error_provider

if TYPE_CHECKING:
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.handler")

# Request ids: a per-process random prefix and a counter (uuid4 per request costs an
# os.urandom call, measurably slow on busy VMs).
_ID_PREFIX = os.urandom(6).hex()
_ID_COUNTER = itertools.count(1)


def new_request_id() -> str:
    return f"{_ID_PREFIX}{next(_ID_COUNTER):010x}"


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    """The whole request body, refusing more than ``limit`` bytes without reading them all."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        parts.append(chunk)
    return b"".join(parts)


async def handle(request: Request) -> Response | Relay:
    gate: Gate = request.app.state.gate
    started = time.perf_counter()
    scope = request.scope
    raw_headers = scope["headers"]
    request_id = new_request_id()
    extra = {
        "x-prefixgate-request-id": request_id,
        "x-prefixgate-prefix-segments": "0",
        "x-prefixgate-prefix-bytes": "0",
    }
    raw_path = scope.get("raw_path") or scope["path"].encode()
    raw_path = raw_path.split(b"?", 1)[0]
    query = scope.get("query_string", b"")
    tenant = gate.tenants.tenant_of(raw_headers, query)
    try:
        target = gate.router.resolve(raw_path, query, request.headers)
    except BadPath as exc:
        if exc.unknown_prefix:
            # no upstream's path at all (a browser's /favicon.ico): answered, never recorded
            return errors.error_response(OPENAI, errors.NOT_FOUND, str(exc), extra)
        provider = exc.provider or error_provider(scope["path"], request.headers)
        # the route as sent, escaped: never a decoded "\n" in a record
        route = raw_path[:200].decode("latin-1").encode("unicode_escape").decode("ascii")
        record = RequestRecord(request_id, time.time(), tenant, provider, route, method=request.method)
        record.upstream = exc.upstream
        error = errors.NOT_FOUND if exc.status == 404 else errors.BAD_PATH
        return _fail(gate, Exchange(record, started, extra), error, str(exc))

    record = RequestRecord(
        request_id, time.time(), tenant, target.provider, target.route, method=request.method
    )
    record.upstream = target.upstream
    exchange = Exchange(record, started, extra, target)
    try:
        return await _prepare(request, gate, exchange)
    except asyncio.CancelledError:
        # The server's shutdown cut it before the relay began: one record, and the client
        # gets the 503 it says (raising on would make uvicorn answer a bare 500).
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        log.warning("request %s cut by shutdown", request_id)
        return _fail(gate, exchange, errors.SHUTDOWN_CUT, "the proxy is shutting down; retry")


async def _prepare(request: Request, gate: Gate, exchange: Exchange) -> Response | Relay:
    """Body, analysis, rewrite, store and diagnosis for a routed request; the relay."""
    record, target, extra = exchange.record, exchange.target, exchange.headers
    assert target is not None
    request_id = record.request_id
    tenant = record.tenant
    try:
        raw = await read_body(request, gate.config.max_body)
    except BodyTooLarge:
        message = f"request body over the proxy's limit of {gate.config.max_body} bytes (--max-body)"
        return _fail(gate, exchange, errors.BODY_TOO_LARGE, message)
    except ClientDisconnect:
        return _fail(gate, exchange, errors.CLIENT_GONE, "client disconnected while sending the body")

    if len(raw) > BIG_BODY:
        analysis = await anyio.to_thread.run_sync(analyse, target, raw)
    else:
        analysis = analyse(target, raw)
    mode = rewrite_mode(request, gate)
    if mode is None:
        return _fail(
            gate, exchange, errors.BAD_REWRITE_MODE, f"x-prefixgate-rewrite must be one of {', '.join(MODES)}"
        )
    raw, analysis, applied, added = await rewrite_step(request, gate, exchange, mode, raw, analysis)
    if applied:
        record.rewrites = applied
        extra["x-prefixgate-rewrites"] = ",".join(applied)
    # --gemini-auto-cache: reference (or start) an explicit cache; a failure leaves the body as it came
    raw, analysis = gate.gemini_auto_cache.before(
        exchange, raw, analysis, request.scope["headers"], request.scope.get("query_string", b"")
    )
    exchange.analysis = analysis
    replicas = gate.replicas.get(target.upstream)
    if replicas is not None:
        # the pool's replica is picked at send time (proxy.replica_send), by the final body's chain
        exchange.replicas = replicas
        exchange.route_key, exchange.route_head = route_of(analysis.segments, analysis.chain)
    record.analysed = analysis.analysed
    record.model = analysis.model
    record.stream = analysis.stream
    record.total_segments = len(analysis.segments)
    record.total_bytes = analysis.total_bytes
    if analysis.chain is not None:
        record.chain = [h[:8].hex() for h in analysis.chain.hashes]
    if gate.money is not None and analysis.caches:
        try:
            exchange.early = gate.money.money.before(tenant, target.rules, analysis.model, analysis.segments)
        except Exception:
            log.exception("miss diagnosis failed on request %s", request_id)
        early = exchange.early
        if early is not None and early.diagnosis is not None:
            extra["x-prefixgate-miss-reason"] = early.diagnosis.header()

    if gate.config.log_bodies:
        record.body = raw
    ask = exchange.ask_usage = analysis.analysed and needs_stream_usage(target.endpoint, analysis)
    exchange.upstream_body = with_stream_usage(raw, analysis) if ask else raw
    # a rewritten Gemini request asks for an uncompressed answer: the relay reads its error to
    # tell a cache refusal
    exchange.upstream_headers = (
        request_headers(request.scope["headers"], force_identity=ask or exchange.fallback_body is not None)
        + added
    )
    if analysis.caches and analysis.chain is not None:
        # last, as nothing sent upstream depends on it and nothing here can fail after it: the
        # look-up runs beside the upstream call, and the relay awaits it before the head
        exchange.lookup = Lookup(record, extra, analysis.chain)
        exchange.lookup.start(gate.store)
    return Relay(exchange, gate)


def _fail(gate: Gate, exchange: Exchange, error: errors.ProxyError, message: str) -> Response:
    record = exchange.record
    errors.record_failure(record, error)
    record.latency_s = time.perf_counter() - exchange.started
    gate.finish(exchange)
    return errors.error_response(record.provider, error, message, exchange.headers)
