"""Which of OpenAI's caching contracts a request gets, applied: the one entry for the handlers.

The model's generation decides: GPT-5.6+ at breakpoints (:mod:`.openai_breakpoint_cache`), older
models automatically in 128-token steps (:mod:`.openai_cache`). Parameters are checked first
(:mod:`.openai_options`; :func:`param_error` makes the 400). The usage blocks for Chat
Completions and Responses are written here, so both APIs (and ``/v1/responses/compact``) report
the same numbers. It keeps no state and renders no replies.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from analyzer.segments import segments_for
from proxy.emulator.errors import openai_error
from proxy.emulator.openai_breakpoint_cache import apply_breakpoints
from proxy.emulator.openai_cache import PromptCacheResult, apply_openai_cache, rendered_prompt
from proxy.emulator.openai_options import ParamError, check
from proxy.emulator.state import Call, EmulatorState


def openai_ttl(state: EmulatorState, body: dict[str, Any]) -> float:
    """The TTL of the rules before GPT-5.6 (``prompt_cache_retention: "24h"`` extends it)."""
    if body.get("prompt_cache_retention") == "24h":
        return state.config.openai_extended_ttl_s
    return state.config.openai_ttl_s


def prompt_cache(state: EmulatorState, call: Call, api: str) -> PromptCacheResult:
    """The cache outcome of ``call`` on ``api`` (chat, responses, compact); raises ParamError."""
    body = call.body
    model = body["model"]
    options = check(body, api, model)
    if options is None:
        return apply_openai_cache(
            state.cache, call.key, model, rendered_prompt(call.route, body), openai_ttl(state, body)
        )
    return apply_breakpoints(state.cache, call.key, model, segments_for("openai", call.route, body), options)


def param_error(exc: ParamError) -> JSONResponse:
    return openai_error(400, exc.message, param=exc.param, code=exc.code)


def chat_usage(cache: PromptCacheResult, completion: int) -> dict[str, Any]:
    """Chat Completions usage; GPT-5.6+ adds ``prompt_tokens_details.cache_write_tokens``."""
    details: dict[str, Any] = {"cached_tokens": cache.cached_tokens, "audio_tokens": 0}
    if cache.breakpoints:
        details["cache_write_tokens"] = cache.cache_write_tokens
    return {
        "prompt_tokens": cache.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": cache.prompt_tokens + completion,
        "prompt_tokens_details": details,
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def responses_usage(cache: PromptCacheResult, completion: int) -> dict[str, Any]:
    """Responses usage; GPT-5.6+ adds ``cache_write_tokens`` and its split by TTL."""
    details: dict[str, Any] = {"cached_tokens": cache.cached_tokens}
    if cache.breakpoints:
        details["cache_write_tokens"] = cache.cache_write_tokens
        details["cache_write_tokens_details"] = {
            "ttl_30m_tokens": cache.cache_write_30m_tokens,
            "ttl_12h_tokens": cache.cache_write_12h_tokens,
        }
    return {
        "input_tokens": cache.prompt_tokens,
        "input_tokens_details": details,
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": cache.prompt_tokens + completion,
    }
