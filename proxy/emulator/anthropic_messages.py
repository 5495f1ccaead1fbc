"""Anthropic Messages (``POST /v1/messages``), token counting and model listing.

Plain answers carry Anthropic-style ``usage`` (``input_tokens`` excludes cache reads and writes;
``cache_creation`` split by TTL). Streams send ``event:``/``data:`` pairs: message_start (input
and cache numbers, ``output_tokens`` 1), content blocks, ping, message_delta (output),
message_stop. A broken caching rule is a 400. Compaction (:mod:`.anthropic_compaction`) adds
``usage.iterations``; ``diagnostics`` (:mod:`.anthropic_diagnostics`) adds the Message's
``diagnostics``, streamed inside ``message_start.message``; without them nothing changes.
It does not emulate tool use, thinking blocks or batches. See docs/emulator.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from starlette.responses import JSONResponse, Response

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from analyzer.wire import sse_event
from proxy.emulator.anthropic_cache import AnthropicUsage, CacheRuleError, apply_anthropic_cache
from proxy.emulator.anthropic_compaction import Compaction, iteration, maybe_compact, trigger_tokens
from proxy.emulator.anthropic_diagnostics import diagnostics, fingerprint, requested
from proxy.emulator.errors import anthropic_error
from proxy.emulator.event_stream import sse_response
from proxy.emulator.reply import output_tokens, reply_text, split_pieces
from proxy.emulator.state import Call, EmulatorState

MODELS = ("claude-sonnet-4-6", "claude-opus-4-7", "claude-haiku-4-5")


def usage_block(u: AnthropicUsage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": u.cache_creation_5m,
            "ephemeral_1h_input_tokens": u.cache_creation_1h,
        },
        "output_tokens": output,
        "service_tier": "standard",
    }


def _invalid(body: dict[str, Any], need_max_tokens: bool) -> str | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not isinstance(body.get("messages"), list):
        return "messages: Field required"
    if need_max_tokens:
        limit = body.get("max_tokens")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            return "max_tokens: Field required (a positive integer)"
    return None


def handle_messages(state: EmulatorState, call: Call) -> Response:
    body = call.body
    problem = _invalid(body, need_max_tokens=True)
    if problem:
        return anthropic_error(400, problem)
    try:
        opted_in, previous_id = requested(body)
        trigger = trigger_tokens(body, state.config.compaction_trigger_tokens)
        usage = apply_anthropic_cache(state.cache, state.config, call.key, call.route, body)
    except CacheRuleError as exc:
        return anthropic_error(400, str(exc))
    compaction = maybe_compact(state.cache, state.config, call.key, call.route, body, trigger, usage)
    final = compaction.message if compaction else usage
    n_out = output_tokens(body, state.config)
    text = reply_text(body, n_out)
    mid = state.new_id("msg_")
    headers = {"request-id": state.new_id("req_")}
    message = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage_block(final, n_out),
    }
    if compaction:
        message["usage"]["iterations"] = [
            iteration("compaction", compaction.compaction, compaction.summary_tokens),
            iteration("message", final, n_out),
        ]
    if opted_in:
        current = fingerprint(
            body,
            segments_for("anthropic", call.route, body),
            usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
        )
        message["diagnostics"] = diagnostics(state.messages, call.key, previous_id, current)
        state.messages.put(call.key, mid, current)
    if body.get("stream") is True:
        pieces = split_pieces(text, call.controls.chunks or state.config.default_chunks)
        return sse_response(state, call, _events(message, final, pieces, n_out, compaction), headers)
    return JSONResponse(message, headers=headers)


def _events(
    message: dict, usage: AnthropicUsage, pieces: list[str], n_out: int, compaction: Compaction | None
) -> Iterator[bytes]:
    start = {**message, "content": [], "stop_reason": None, "usage": usage_block(usage, 1)}
    delta_usage: dict = {"output_tokens": n_out}
    if compaction:
        # the compaction pass at the start, the final message's numbers at the end
        start["usage"]["iterations"] = [
            iteration("compaction", compaction.compaction, compaction.summary_tokens)
        ]
        delta_usage = {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": n_out,
            "iterations": [iteration("message", usage, n_out)],
        }
    yield sse_event("message_start", {"type": "message_start", "message": start})
    yield sse_event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    yield sse_event("ping", {"type": "ping"})
    for piece in pieces:
        yield sse_event(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
        )
    yield sse_event("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield sse_event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": delta_usage,
        },
    )
    yield sse_event("message_stop", {"type": "message_stop"})


def handle_count_tokens(state: EmulatorState, call: Call) -> Response:
    problem = _invalid(call.body, need_max_tokens=False)
    if problem:
        return anthropic_error(400, problem)
    total = estimate_tokens(sum(len(s.data) for s in segments_for("anthropic", call.route, call.body)))
    return JSONResponse({"input_tokens": total})


def anthropic_models(model_id: str | None) -> Response:
    def entry(name: str) -> dict:
        return {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}

    if model_id is not None:
        return JSONResponse(entry(model_id))
    data = [entry(m) for m in MODELS]
    return JSONResponse(
        {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
    )
