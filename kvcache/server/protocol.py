"""OpenAI request bodies → ``CompletionRequest``; results → OpenAI response objects and stream chunks.

Covers /v1/chat/completions and /v1/completions: messages or prompt (text or token ids), max_tokens /
max_completion_tokens, temperature (default 1, like OpenAI), top_p, seed, stop (string or list), stream
and stream_options.include_usage, and vLLM's ``ignore_eos`` (run to max_tokens; for benchmarks). Usage
carries ``prompt_tokens_details.cached_tokens`` (prompt tokens whose KV came from the shared prefix
blocks). Invalid fields raise ``RequestError`` (→ HTTP 400).
It does not run the model.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kvcache.errors import EngineError
from kvcache.params import SamplingParams, Timings


class RequestError(EngineError):
    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass
class CompletionRequest:
    chat: bool
    messages: list[dict[str, Any]] | None = None
    prompt: str | None = None
    prompt_ids: list[int] | None = None
    max_tokens: int | None = None
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stops: list[str] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    ignore_eos: bool = False  # vLLM's extension: generate until max_tokens (benchmarks)


def _number(body: dict, name: str, default: float, lo: float, hi: float) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise RequestError(f"{name} must be a number between {lo} and {hi}", name)
    return float(value)


def parse_request(body: Any, chat: bool) -> CompletionRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    req = CompletionRequest(chat=chat)
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("messages must be a non-empty list", "messages")
        req.messages = [_message(m, i) for i, m in enumerate(messages)]
    else:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
            prompt = prompt[0]
        if isinstance(prompt, str) and prompt:
            req.prompt = prompt
        elif (
            isinstance(prompt, list)
            and prompt
            and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt)
        ):
            req.prompt_ids = list(prompt)
        else:
            raise RequestError(
                "prompt must be a non-empty string or a list of token ids (one prompt per request)", "prompt"
            )
    if body.get("n", 1) not in (1, None):
        raise RequestError("only n=1 is supported", "n")
    name = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    limit = body.get(name)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise RequestError(f"{name} must be a positive integer", name)
    req.max_tokens = limit if limit is not None else (None if chat else 16)  # OpenAI's completions default
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestError("seed must be an integer", "seed")
    req.sampling = SamplingParams(
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, 1e-9, 1.0),
        seed=seed,
    )
    stop = body.get("stop")
    if isinstance(stop, str):
        req.stops = [stop]
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop) and len(stop) <= 4:
        req.stops = stop
    elif stop is not None:
        raise RequestError("stop must be a string or a list of up to 4 strings", "stop")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("stream must be true or false", "stream")
    req.stream = bool(stream)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise RequestError("stream_options must be an object", "stream_options")
    req.include_usage = bool(options and options.get("include_usage"))
    ignore_eos = body.get("ignore_eos", False)
    if not isinstance(ignore_eos, bool):
        raise RequestError("ignore_eos must be true or false", "ignore_eos")
    req.ignore_eos = ignore_eos
    return req


def _message(message: Any, index: int) -> dict[str, Any]:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise RequestError(f"messages[{index}] must be an object with a role", "messages")
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise RequestError(f"messages[{index}].content must be a string or a list of text parts", "messages")
    return {"role": message["role"], "content": content}


def usage(timings: Timings, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": timings.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": timings.prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": timings.cached_tokens},
    }


def timing_fields(timings: Timings) -> dict[str, float]:
    """llama.cpp-style extra: the two phases, measured."""
    return {
        "ttft_ms": round(timings.ttft_s * 1000, 3),
        "prefill_tokens_per_s": round(timings.prefill_tokens_per_s, 2),
        "decode_tokens_per_s": round(timings.decode_tokens_per_s, 2),
        "cached_tokens": timings.cached_tokens,
    }


class ResponseBuilder:
    def __init__(self, chat: bool, model: str):
        self.chat, self.model = chat, model
        self.id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        self.created = int(time.time())

    def _head(self, chunk: bool) -> dict[str, Any]:
        kind = "chat.completion" if self.chat else "text_completion"
        return {
            "id": self.id,
            "object": kind + (".chunk" if chunk and self.chat else ""),
            "created": self.created,
            "model": self.model,
        }

    def full(self, text: str, finish_reason: str, usage_block: dict, timings: dict) -> dict[str, Any]:
        if self.chat:
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return {**self._head(False), "choices": [choice], "usage": usage_block, "timings": timings}

    def chunk(
        self, text: str | None, finish_reason: str | None = None, first: bool = False
    ) -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {"role": "assistant", "content": ""} if first else {}
            if text:
                delta["content"] = text
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        else:
            choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish_reason}
        return {**self._head(True), "choices": [choice]}

    def usage_chunk(self, usage_block: dict, timings: dict) -> dict[str, Any]:
        return {**self._head(True), "choices": [], "usage": usage_block, "timings": timings}
