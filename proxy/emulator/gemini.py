"""Gemini's ``generateContent``, ``streamGenerateContent`` and ``countTokens``, and its model list.

Routes ``POST /{v1beta,v1,v1alpha}/models/{model}:{method}``. A plain answer is one
``GenerateContentResponse`` with ``usageMetadata`` (``promptTokenCount`` including
``cachedContentTokenCount``, shown only when some were read); ``?alt=sse`` sends one ``data:``
event per chunk framed with ``\\r\\n\\r\\n``, without it the chunks are one JSON array; every chunk
carries ``usageMetadata``, the last the totals. No ``contents``: a 400 ``INVALID_ARGUMENT``. A
``cachedContent`` reads that explicit cache (:mod:`.gemini_cached_contents`); implicit caching
applies only without one. It emulates no tools or thinking and stores no explicit caches.
See docs/emulator.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from starlette.responses import JSONResponse, Response, StreamingResponse

from proxy.emulator.errors import gemini_error
from proxy.emulator.event_stream import SSE_HEADERS, sse_response
from proxy.emulator.gemini_cached_contents import resolve_cached
from proxy.emulator.gemini_implicit_cache import apply_gemini_cache, rendered_prompt
from proxy.emulator.openai_cache import PromptCacheResult
from proxy.emulator.reply import reply_text, split_pieces
from proxy.emulator.state import Call, EmulatorState

MODELS = ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-3.5-flash", "gemini-3.1-pro-preview")
METHODS = ("generateContent", "streamGenerateContent", "countTokens")


def split_method(name: str) -> tuple[str, str]:
    """``"gemini-2.5-flash:generateContent"`` → (model, method)."""
    model, _, method = name.rpartition(":")
    return model, method


def _max_output(body: dict[str, Any], state: EmulatorState) -> int:
    config = body.get("generationConfig", body.get("generation_config"))
    value = (
        config.get("maxOutputTokens", config.get("max_output_tokens")) if isinstance(config, dict) else None
    )
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return min(value, state.config.max_output_tokens)
    return state.config.default_output_tokens


def _last_user_text(body: dict[str, Any]) -> str:
    contents = body.get("contents")
    if isinstance(contents, list):
        for content in reversed(contents):
            if (
                isinstance(content, dict)
                and content.get("role", "user") == "user"
                and isinstance(content.get("parts"), list)
            ):
                return " ".join(
                    p["text"]
                    for p in content["parts"]
                    if isinstance(p, dict) and isinstance(p.get("text"), str)
                )
    return ""


def usage_metadata(cache: PromptCacheResult, output: int | None) -> dict[str, Any]:
    """``usageMetadata``; ``output`` None for a chunk before the last (prompt counts only)."""
    meta: dict[str, Any] = {"promptTokenCount": cache.prompt_tokens}
    if output is not None:
        meta["candidatesTokenCount"] = output
    meta["totalTokenCount"] = cache.prompt_tokens + (output or 0)
    if cache.cached_tokens:
        meta["cachedContentTokenCount"] = cache.cached_tokens
    meta["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": cache.prompt_tokens}]
    if cache.cached_tokens:
        meta["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cache.cached_tokens}]
    if output is not None:
        meta["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": output}]
    return meta


def _chunk(text: str, model: str, rid: str, usage: dict[str, Any], last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": rid}


def handle_gemini(state: EmulatorState, call: Call) -> Response:
    name = call.route.rpartition("/models/")[2]
    model, method = split_method(name)
    body = call.body
    if not model or method not in METHODS:
        return gemini_error(
            404, f"models/{name} is not found or not supported (methods: {', '.join(METHODS)})"
        )
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return gemini_error(400, "* GenerateContentRequest.contents: contents is not specified")
    cached_content = body.get("cachedContent", body.get("cached_content"))
    explicit = 0
    if cached_content is not None:
        # an explicit cache: its parts first, then the request's
        resolved = resolve_cached(state, call, model, cached_content)
        if isinstance(resolved, Response):
            return resolved
        body, explicit = resolved
        state.cached_contents.reads += 1
    if method == "countTokens":
        from analyzer.tokens import estimate_tokens

        return JSONResponse({"totalTokens": estimate_tokens(len(rendered_prompt(body)))})
    if explicit:
        # Google reports the cache's tokens as cachedContentTokenCount, inside promptTokenCount
        from analyzer.tokens import estimate_tokens

        cache = PromptCacheResult(estimate_tokens(len(rendered_prompt(body))), explicit)
    else:
        cache = apply_gemini_cache(
            state.cache, call.key, model, rendered_prompt(body), state.config.gemini_ttl_s
        )
    n_out = _max_output(body, state)
    text = reply_text({"prompt": _last_user_text(body)}, n_out)
    rid = state.new_id("gem")
    if method == "generateContent":
        return JSONResponse(_chunk(text, model, rid, usage_metadata(cache, n_out), True))
    pieces = split_pieces(text, call.controls.chunks or state.config.default_chunks)
    chunks = [
        _chunk(
            piece,
            model,
            rid,
            usage_metadata(cache, n_out if i == len(pieces) - 1 else None),
            i == len(pieces) - 1,
        )
        for i, piece in enumerate(pieces)
    ]
    if call.query.get("alt") == "sse":
        return sse_response(state, call, (b"data: " + orjson.dumps(c) + b"\r\n\r\n" for c in chunks), {})
    return StreamingResponse(_array(chunks), media_type="application/json", headers=SSE_HEADERS)


def _array(chunks: list[dict[str, Any]]) -> Iterator[bytes]:
    """The JSON array ``streamGenerateContent`` sends without ``alt=sse``, one chunk a write."""
    for i, chunk in enumerate(chunks):
        yield (b"[" if i == 0 else b",\r\n") + orjson.dumps(chunk)
    yield b"]"


def gemini_models() -> Response:
    models = [
        {
            "name": f"models/{m}",
            "displayName": m,
            "supportedGenerationMethods": list(METHODS),
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536,
        }
        for m in MODELS
    ]
    return JSONResponse({"models": models})
