"""OpenAI Chat Completions and legacy Completions, plain and streaming.

Plain answers carry ``usage.prompt_tokens_details.cached_tokens`` (GPT-5.6+ also
``cache_write_tokens``: :mod:`proxy.emulator.openai_prompt_cache`); legacy Completions always
take the rules before GPT-5.6. Streams: a role chunk, the reply in pieces, a ``finish_reason``
chunk, then only with ``stream_options.include_usage`` a ``choices: []`` usage chunk (earlier
chunks then carry ``"usage": null``), then ``data: [DONE]``.
It validates no more than it needs (``model``, ``messages``/``prompt``). See docs/emulator.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from starlette.responses import JSONResponse, Response

from analyzer.wire import SSE_DONE, sse_data
from proxy.emulator.errors import openai_error
from proxy.emulator.event_stream import sse_response
from proxy.emulator.openai_cache import apply_openai_cache, rendered_prompt
from proxy.emulator.openai_options import ParamError
from proxy.emulator.openai_prompt_cache import chat_usage, openai_ttl, param_error, prompt_cache
from proxy.emulator.reply import output_tokens, reply_text, split_pieces
from proxy.emulator.state import Call, EmulatorState

FINGERPRINT = "fp_emulator"


def _check(call: Call, field: str) -> Response | None:
    if not isinstance(call.body.get("model"), str) or not call.body["model"]:
        return openai_error(400, "you must provide a model parameter", param="model")
    if field not in call.body:
        return openai_error(
            400, f"Missing required parameter: '{field}'.", param=field, code="missing_required_parameter"
        )
    return None


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def handle_chat(state: EmulatorState, call: Call) -> Response:
    return _handle(state, call, chat=True)


def handle_completions(state: EmulatorState, call: Call) -> Response:
    return _handle(state, call, chat=False)


def _handle(state: EmulatorState, call: Call, *, chat: bool) -> Response:
    bad = _check(call, "messages" if chat else "prompt")
    if bad is not None:
        return bad
    body, model = call.body, call.body["model"]
    if chat:
        try:
            cache = prompt_cache(state, call, "chat")
        except ParamError as exc:
            return param_error(exc)
    else:
        # legacy Completions: the automatic rules, whatever the model
        cache = apply_openai_cache(
            state.cache, call.key, model, rendered_prompt(call.route, body), openai_ttl(state, body)
        )
    n_out = output_tokens(body, state.config)
    text = reply_text(body, n_out)
    rid = state.new_id("chatcmpl-" if chat else "cmpl-")
    headers = {"x-request-id": rid, "openai-processing-ms": "0"}
    usage = chat_usage(cache, n_out)
    if body.get("stream") is True:
        pieces = split_pieces(text, call.controls.chunks or state.config.default_chunks)
        events = _chat_events if chat else _completion_events
        return sse_response(
            state, call, events(rid, state.now(), model, pieces, usage, _include_usage(body)), headers
        )
    if chat:
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
            "logprobs": None,
            "finish_reason": "stop",
        }
        obj = "chat.completion"
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}
        obj = "text_completion"
    payload = {
        "id": rid,
        "object": obj,
        "created": state.now(),
        "model": model,
        "choices": [choice],
        "usage": usage,
        "system_fingerprint": FINGERPRINT,
        "service_tier": "default",
    }
    return JSONResponse(payload, headers=headers)


def _chat_events(
    rid: str, created: int, model: str, pieces: list[str], usage: dict, with_usage: bool
) -> Iterator[bytes]:
    def chunk(choices: list[dict], **extra: Any) -> bytes:
        payload = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": FINGERPRINT,
            "choices": choices,
        }
        if with_usage:
            payload["usage"] = None
        payload.update(extra)
        return sse_data(payload)

    def delta(d: dict, finish: str | None = None) -> list[dict]:
        return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]

    yield chunk(delta({"role": "assistant", "content": "", "refusal": None}))
    for piece in pieces:
        yield chunk(delta({"content": piece}))
    yield chunk(delta({}, "stop"))
    if with_usage:
        yield chunk([], usage=usage)
    yield SSE_DONE


def _completion_events(
    rid: str, created: int, model: str, pieces: list[str], usage: dict, with_usage: bool
) -> Iterator[bytes]:
    def chunk(choices: list[dict], **extra: Any) -> bytes:
        payload = {
            "id": rid,
            "object": "text_completion",
            "created": created,
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": choices,
        }
        if with_usage:
            payload["usage"] = None
        payload.update(extra)
        return sse_data(payload)

    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        yield chunk(
            [{"index": 0, "text": piece, "logprobs": None, "finish_reason": "stop" if last else None}]
        )
    if with_usage:
        yield chunk([], usage=usage)
    yield SSE_DONE
