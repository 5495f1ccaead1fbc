"""OpenAI ``POST /v1/responses/compact``: a conversation compacted into one opaque item.

The answer is a ``CompactedResponse`` (``object: "response.compaction"``, ``output``: the input's
user messages then one ``compaction`` item with ``encrypted_content``, and a full usage); its
input goes through the same caching rules as ``/v1/responses`` (GPT-5.6+ breakpoints and their
400s included). The SDK types say no more: :data:`ASSUMPTIONS`.
It does not stream (the endpoint has no ``stream``) and keeps nothing.
See docs/emulator.md (the caching rules it applies).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from starlette.responses import JSONResponse, Response

from analyzer.cache_rules.openai import BREAKPOINT_KEY
from proxy.emulator.errors import openai_error
from proxy.emulator.openai_cache import rendered_prompt
from proxy.emulator.openai_options import ParamError
from proxy.emulator.openai_prompt_cache import param_error, prompt_cache, responses_usage
from proxy.emulator.state import Call, EmulatorState

ASSUMPTIONS = """Assumptions (the SDK types say no more), one a line:
- The pass reads exactly the request's prompt (tools → instructions → input items), sharing cache entries with ``/v1/responses`` for the same key and model; the server's own summarisation prompt is not counted.
- ``output_tokens`` is the emulator's default reply length (the request has no output limit).
- ``encrypted_content`` is a deterministic digest of the prompt, opaque and not decodable.
- ``previous_response_id`` is accepted and ignored (no stored responses).
- The user messages come back as ``message`` items with their content parts, markers dropped.
"""


def _parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if isinstance(content, list):
        return [
            {k: v for k, v in p.items() if k != BREAKPOINT_KEY} if isinstance(p, dict) else p for p in content
        ]
    return []


def user_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The input's user messages, as the items ``output`` starts with (ids added later)."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        return []
    return [
        {"type": "message", "status": "completed", "role": "user", "content": _parts(item.get("content"))}
        for item in items
        if isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message"
    ]


def handle_compact(state: EmulatorState, call: Call) -> Response:
    body = call.body
    if not isinstance(body.get("model"), str) or not body["model"]:
        return openai_error(
            400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter"
        )
    try:
        cache = prompt_cache(state, call, "compact")
    except ParamError as exc:
        return param_error(exc)
    rid = state.new_id("resp_")
    output = [{"id": state.new_id("msg_"), **item} for item in user_messages(body)]
    digest = hashlib.sha256(
        b"prefixgate-emulator-compaction\x00" + rendered_prompt(call.route, body)
    ).digest()
    output.append(
        {
            "id": state.new_id("cmp_"),
            "type": "compaction",
            "encrypted_content": base64.b64encode(digest * 4).decode(),
        }
    )
    payload = {
        "id": rid,
        "object": "response.compaction",
        "created_at": state.now(),
        "output": output,
        "usage": responses_usage(cache, state.config.default_output_tokens),
    }
    return JSONResponse(payload, headers={"x-request-id": rid})
