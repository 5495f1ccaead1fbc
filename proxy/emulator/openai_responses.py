"""OpenAI Responses API (``POST /v1/responses``), plain and streaming.

Usage counts cached tokens inside ``input_tokens`` (GPT-5.6+ adds ``cache_write_tokens`` and
its details: :mod:`proxy.emulator.openai_prompt_cache`, where a refused caching parameter is a
400). Streams send the documented event sequence with ``event:`` lines and increasing
``sequence_number``, from response.created to response.completed (which carries the usage).
It does not emulate tools, reasoning items or stored responses. See docs/emulator.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from starlette.responses import JSONResponse, Response

from analyzer.wire import sse_event
from proxy.emulator.errors import openai_error
from proxy.emulator.event_stream import sse_response
from proxy.emulator.openai_options import ParamError
from proxy.emulator.openai_prompt_cache import param_error, prompt_cache, responses_usage
from proxy.emulator.reply import output_tokens, reply_text, split_pieces
from proxy.emulator.state import Call, EmulatorState


def _response(
    rid: str, created: int, body: dict, status: str, output: list, usage: dict | None
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body["model"],
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": bool(body.get("store", True)),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _message(mid: str, text: str, status: str) -> dict[str, Any]:
    content = (
        [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        if status == "completed"
        else []
    )
    return {"id": mid, "type": "message", "status": status, "role": "assistant", "content": content}


def handle_responses(state: EmulatorState, call: Call) -> Response:
    body = call.body
    if not isinstance(body.get("model"), str) or not body["model"]:
        return openai_error(
            400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter"
        )
    try:
        cache = prompt_cache(state, call, "responses")
    except ParamError as exc:
        return param_error(exc)
    n_out = output_tokens(body, state.config)
    text = reply_text(body, n_out)
    rid, mid = state.new_id("resp_"), state.new_id("msg_")
    usage = responses_usage(cache, n_out)
    headers = {"x-request-id": rid}
    if body.get("stream") is True:
        pieces = split_pieces(text, call.controls.chunks or state.config.default_chunks)
        return sse_response(state, call, _events(rid, mid, state.now(), body, text, pieces, usage), headers)
    payload = _response(rid, state.now(), body, "completed", [_message(mid, text, "completed")], usage)
    payload["output_text"] = text
    return JSONResponse(payload, headers=headers)


def _events(
    rid: str, mid: str, created: int, body: dict, text: str, pieces: list[str], usage: dict
) -> Iterator[bytes]:
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        payload = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return sse_event(kind, payload)

    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    where = {"item_id": mid, "output_index": 0, "content_index": 0}
    yield event("response.created", response=_response(rid, created, body, "in_progress", [], None))
    yield event("response.in_progress", response=_response(rid, created, body, "in_progress", [], None))
    yield event("response.output_item.added", output_index=0, item=_message(mid, "", "in_progress"))
    yield event("response.content_part.added", **where, part=part)
    for piece in pieces:
        yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
    yield event("response.output_text.done", **where, text=text, logprobs=[])
    yield event("response.content_part.done", **where, part={**part, "text": text})
    done = _message(mid, text, "completed")
    yield event("response.output_item.done", output_index=0, item=done)
    yield event("response.completed", response=_response(rid, created, body, "completed", [done], usage))
