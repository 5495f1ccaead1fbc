"""The handler's rewrite step: the mode, the rewritten body, its re-cut analysis, the added headers.

The mode is ``--rewrite`` or the request's ``x-prefixgate-rewrite``. Only where OpenAI's or
Anthropic's own rules apply (their fields: ``prompt_cache_key``, ``cache_control``), or xAI's /
Mistral's routing hints on their OpenAI-style API, is a body rewritten; a look-alike (DeepSeek,
Gemini) goes as sent. Under a mode an analysed POST also asks the provider why it missed
(:mod:`proxy.provider_diagnostics`). Both are advice: a failure is logged, the body goes as it came.
It does not read the body off the wire, send anything or touch the record. See docs/rewrite.md.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from starlette.requests import Request

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
from proxy.body_analysis import BIG_BODY, BodyAnalysis, analyse
from proxy.endpoints import ANTHROPIC, OPENAI, Kind
from proxy.head_returns import OPENAI_56_WINDOWS
from proxy.upstream_urls import Target

if TYPE_CHECKING:
    from proxy.exchange import Exchange
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.handler")

Rewritten = tuple[bytes, BodyAnalysis, list[str], list[tuple[bytes, bytes]]]

_REWRITE_API = {
    (OPENAI, Kind.CHAT): OPENAI_CHAT,
    (OPENAI, Kind.RESPONSES): OPENAI_RESPONSES,
    (ANTHROPIC, Kind.MESSAGES): ANTHROPIC_MESSAGES,
}


def rewrite_mode(request: Request, gate: Gate) -> str | None:
    """``--rewrite``, or the request's ``x-prefixgate-rewrite`` (never forwarded); None when
    the header names no mode."""
    asked = request.headers.get("x-prefixgate-rewrite")
    if asked is None:
        return gate.config.rewrite
    asked = asked.strip().lower()
    return asked if asked in MODES else None


async def rewrite_step(
    request: Request, gate: Gate, exchange: Exchange, mode: str, raw: bytes, analysis: BodyAnalysis
) -> Rewritten:
    """The body to forward, its analysis, the rewrite ids applied (a body that is no JSON object:
    ``SKIPPED_SHAPE``; a rewrite that raised: ``SKIPPED_ERROR``) and the request headers to add
    upstream (xAI's ``x-grok-conv-id``). A body over :data:`BIG_BODY` is rewritten off the loop."""
    target, tenant, request_id = exchange.target, exchange.record.tenant, exchange.record.request_id
    assert target is not None
    rewritable = target.rules == target.provider or (target.provider == OPENAI and target.rules in HINT_RULES)
    api = (
        _REWRITE_API.get((target.provider, target.endpoint.kind))
        if request.method == "POST" and rewritable
        else None
    )
    applied: list[str] = []
    added: list[tuple[bytes, bytes]] = []
    if mode != OFF and api is not None and not analysis.analysed and raw.strip():
        applied = [SKIPPED_SHAPE]
    elif mode != OFF and api is not None and analysis.analysed and analysis.body is not None:
        args = (gate, target, tenant, api, mode, raw, analysis, request.headers)
        try:
            if len(raw) > BIG_BODY:
                raw, analysis, applied, added = await anyio.to_thread.run_sync(_rewrite, *args)
            else:
                raw, analysis, applied, added = _rewrite(*args)
        except Exception:
            log.exception("rewrite failed on request %s; forwarding the body unchanged", request_id)
            applied = [SKIPPED_ERROR]
    if (
        mode != OFF
        and request.method == "POST"
        and analysis.analysed
        and not {SKIPPED_ERROR, SKIPPED_SHAPE} & set(applied)
    ):
        try:
            raw, asked = gate.provider_diagnostics.ask(target, tenant, raw, analysis)
            applied = [*applied, asked] if asked else applied
        except Exception:
            log.exception(
                "provider diagnostics failed on request %s; forwarding the body without", request_id
            )
    return raw, analysis, applied, added


def _rewrite(
    gate: Gate,
    target: Target,
    tenant: str,
    api: str,
    mode: str,
    raw: bytes,
    analysis: BodyAnalysis,
    sent: Any = (),
) -> Rewritten:
    """The body to forward, its analysis (re-cut when the body changed, so the store and
    the miss diagnosis see what the provider will), the rewrite ids applied and the request
    headers to add upstream (``sent``: the client's headers, which a rewrite never replaces).
    ``ttl-12h`` is weighed on Responses only (Chat usage has no TTL split to price it by), and
    not at all where 12-hour writes are unpriced."""
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
