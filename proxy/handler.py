"""The proxied endpoints (``/v1/*``, ``/v1beta/*``, ``/NAME/*``): one request from arrival to the
:class:`~proxy.relay.Relay` that sends it.

Route → tenant → :class:`~proxy.exchange.Exchange` → body (bounded) → analyse → rewrite (and
the provider-diagnostics ask) → the Gemini auto-cache hook → early miss diagnosis → maybe ask an
OpenAI stream for usage → start the store look-up → return the relay. Every outcome ends in
exactly one record (but an unknown first segment: a 404, no record). The store, the rewrite
and the diagnosis are advice: a failure is logged and the request goes on as if it were off.
It sends nothing upstream, streams nothing, never reads the path suffix, never logs headers or bodies.
See docs/request-path.md (order of work; how a request ends early) and docs/store.md.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from analyzer.cache_rules.openai import uses_breakpoints
from analyzer.rewrite import (
    ANTHROPIC_MESSAGES,
    HINT_RULES,
    MODES,
    OFF,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    SKIPPED_ERROR,
    SKIPPED_SHAPE,
    head_key,
    rewrite_request,
    write_12h_ratio,
)
from proxy import errors
from proxy.accounting.records import RequestRecord
from proxy.body_analysis import BodyAnalysis, analyse, needs_stream_usage, with_stream_usage
from proxy.exchange import Exchange
from proxy.head_returns import OPENAI_56_WINDOWS
from proxy.headers import request_headers
from proxy.relay import Relay
from proxy.routing import ANTHROPIC, OPENAI, BadPath, Kind, Target, error_provider
from proxy.store.lookup import Lookup

if TYPE_CHECKING:
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.handler")


BIG_BODY = 1024 * 1024

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
        if (
            exc.unknown_prefix
        ):  # no upstream's path at all (a browser's /favicon.ico): answered, never recorded
            return errors.error_response(OPENAI, errors.NOT_FOUND, str(exc), extra)
        provider = exc.provider or error_provider(scope["path"], request.headers)
        route = (
            raw_path[:200].decode("latin-1").encode("unicode_escape").decode("ascii")
        )  # as sent, never a decoded "\n"
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
    except ClientDisconnect:  # gone while uploading: nothing to forward, still one record
        return _fail(gate, exchange, errors.CLIENT_GONE, "client disconnected while sending the body")

    if len(raw) > BIG_BODY:  # parse big bodies off the loop so other requests keep flowing
        analysis = await anyio.to_thread.run_sync(analyse, target, raw)
    else:
        analysis = analyse(target, raw)
    mode = _rewrite_mode(request, gate)
    if mode is None:
        return _fail(
            gate, exchange, errors.BAD_REWRITE_MODE, f"x-prefixgate-rewrite must be one of {', '.join(MODES)}"
        )
    # Rewrites speak OpenAI's and Anthropic's own fields (prompt_cache_key, cache_control): only
    # where those rules apply, or xAI's / Mistral's routing hints on their OpenAI-style API;
    # a look-alike (DeepSeek, Gemini) gets its body as sent.
    rewritable = target.rules == target.provider or (target.provider == OPENAI and target.rules in HINT_RULES)
    api = (
        _REWRITE_API.get((target.provider, target.endpoint.kind))
        if request.method == "POST" and rewritable
        else None
    )
    applied: list[str] = []
    added: list[tuple[bytes, bytes]] = []  # request headers a rewrite adds (xAI's x-grok-conv-id)
    if mode != OFF and api is not None and not analysis.analysed and raw.strip():
        applied = [SKIPPED_SHAPE]  # not a JSON object: forwarded untouched, and counted
    elif mode != OFF and api is not None and analysis.analysed and analysis.body is not None:
        try:
            if len(raw) > BIG_BODY:  # detection and re-serialising a big body: off the loop
                raw, analysis, applied, added = await anyio.to_thread.run_sync(
                    _rewrite, gate, target, tenant, api, mode, raw, analysis, request.headers
                )
            else:
                raw, analysis, applied, added = _rewrite(
                    gate, target, tenant, api, mode, raw, analysis, request.headers
                )
        except Exception:  # a rewrite is an optimisation: forward the body as it came
            log.exception("rewrite failed on request %s; forwarding the body unchanged", request_id)
            applied = [SKIPPED_ERROR]
    if (
        mode != OFF
        and request.method == "POST"
        and analysis.analysed
        and not {SKIPPED_ERROR, SKIPPED_SHAPE} & set(applied)
    ):  # ask Anthropic why it missed
        try:
            raw, asked = gate.provider_diagnostics.ask(target, tenant, raw, analysis)
            applied = [*applied, asked] if asked else applied
        except Exception:  # advice, like the rewrite: the body goes as it came
            log.exception(
                "provider diagnostics failed on request %s; forwarding the body without", request_id
            )
    if applied:
        record.rewrites = applied
        extra["x-prefixgate-rewrites"] = ",".join(applied)
    # --gemini-auto-cache: reference (or start) an explicit cache; a failure leaves the body as it came
    raw, analysis = gate.gemini_auto_cache.before(
        exchange, raw, analysis, request.scope["headers"], request.scope.get("query_string", b"")
    )
    exchange.analysis = analysis
    record.analysed = analysis.analysed
    record.model = analysis.model
    record.stream = analysis.stream
    record.total_segments = len(analysis.segments)
    record.total_bytes = analysis.total_bytes
    if analysis.chain is not None:
        record.chain = [h[:8].hex() for h in analysis.chain.hashes]
    if gate.money is not None and analysis.caches:
        try:
            exchange.early = gate.money.money.before(
                tenant, target.rules, analysis.model, analysis.segments
            )  # whose caching rules apply
        except Exception:  # diagnosis is advice too: the request and its record go on
            log.exception("miss diagnosis failed on request %s", request_id)
        early = exchange.early
        if early is not None and early.diagnosis is not None:
            extra["x-prefixgate-miss-reason"] = early.diagnosis.header()

    if gate.config.log_bodies:
        record.body = raw
    ask = exchange.ask_usage = analysis.analysed and needs_stream_usage(target.endpoint, analysis)
    exchange.upstream_body = with_stream_usage(raw, analysis) if ask else raw
    # a rewritten Gemini request asks for an uncompressed answer: the relay reads its error to tell a cache refusal
    exchange.upstream_headers = (
        request_headers(request.scope["headers"], force_identity=ask or exchange.fallback_body is not None)
        + added
    )
    if (
        analysis.caches and analysis.chain is not None
    ):  # last: nothing sent upstream depends on it, and nothing here can fail after it
        exchange.lookup = Lookup(record, extra, analysis.chain)
        exchange.lookup.start(
            gate.store
        )  # runs beside the upstream call; the relay awaits it before the head
    return Relay(exchange, gate)


_REWRITE_API = {
    (OPENAI, Kind.CHAT): OPENAI_CHAT,
    (OPENAI, Kind.RESPONSES): OPENAI_RESPONSES,
    (ANTHROPIC, Kind.MESSAGES): ANTHROPIC_MESSAGES,
}


def _rewrite_mode(request: Request, gate: Gate) -> str | None:
    """``--rewrite``, or the request's ``x-prefixgate-rewrite`` (never forwarded); None when
    the header names no mode."""
    asked = request.headers.get("x-prefixgate-rewrite")
    if asked is None:
        return gate.config.rewrite
    asked = asked.strip().lower()
    return asked if asked in MODES else None


def _rewrite(
    gate: Gate,
    target: Target,
    tenant: str,
    api: str,
    mode: str,
    raw: bytes,
    analysis: BodyAnalysis,
    sent: Any = (),
) -> tuple[bytes, BodyAnalysis, list[str], list[tuple[bytes, bytes]]]:
    """The body to forward, its analysis (re-cut when the body changed, so the store and
    the miss diagnosis see what the provider will), the rewrite ids applied and the request
    headers to add upstream (``sent``: the client's headers, which a rewrite never replaces)."""
    body = analysis.body
    model = _serving_model(target, analysis)
    returns, write_12h = None, None
    if isinstance(body, dict) and api == ANTHROPIC_MESSAGES:
        returns = gate.head_returns.observe(head_key(tenant, api, body))
    elif (
        isinstance(body, dict)
        and api == OPENAI_RESPONSES
        and target.rules == OPENAI
        and uses_breakpoints(model)
        and gate.money is not None
    ):
        # ttl-12h (Responses only: Chat usage has no TTL split to price it by); None: 12h writes unpriced
        write_12h = write_12h_ratio(gate.money.money.price_for(model, target.upstream))
        if write_12h is not None:
            returns = gate.head_returns.observe(head_key(tenant, api, body), OPENAI_56_WINDOWS)
    result = rewrite_request(
        api,
        body,
        mode=mode,
        model=model,
        tenant=tenant,
        head_returns=returns,
        rules=target.rules,
        write_12h=write_12h,
        headers=sent,
    )
    added = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in result.headers.items()]
    if result.body is None:
        return raw, analysis, list(result.applied), added
    new_raw = orjson.dumps(result.body)
    return new_raw, analyse(target, new_raw), list(result.applied), added


def _serving_model(target: Target, analysis: BodyAnalysis) -> str | None:
    """The model whose caching rules the rewrite follows: on an Azure deployment route
    (``.../openai/deployments/NAME/...``) the deployment's name, since the deployment serves its
    own model whatever the body's ``model`` says (the AzureOpenAI SDK with ``azure_deployment=``
    sends the body's as given): a GPT-5.6 marker must not reach an older deployment, which
    answers it with a 400. Elsewhere the analysis's (the body's, or the path's for Gemini)."""
    if target.provider == OPENAI and "/deployments/" in target.route:
        parts = target.route.split("/")
        for i in range(len(parts) - 2):
            if parts[i] == "openai" and parts[i + 1] == "deployments" and parts[i + 2]:
                return parts[i + 2]
    return analysis.model


def _fail(gate: Gate, exchange: Exchange, error: errors.ProxyError, message: str) -> Response:
    record = exchange.record
    errors.record_failure(record, error)
    record.latency_s = time.perf_counter() - exchange.started
    gate.finish(exchange)
    return errors.error_response(record.provider, error, message, exchange.headers)
