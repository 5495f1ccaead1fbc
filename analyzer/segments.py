"""A provider request body → its cache-relevant segments, in the provider's cache order.

The public entry: :func:`segments_for` picks the segmenter of a route (:mod:`analyzer.segmenters`:
Anthropic Messages, OpenAI Chat Completions / Responses / Completions, Gemini), each segment
canonical bytes (compact JSON, cache markers dropped and recorded as breakpoints, equivalent
spellings made equal, a kind/role tag first). :class:`Seen` is one request as the miss diagnosis
compares it; :func:`segment_strings` gives the prompt strings inside a segment.

It does NOT hash (see :mod:`analyzer.prefix`) and never raises on odd bodies: fields of the
wrong type are skipped. See docs/request-path.md for each provider's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.jsonpath import JsonPath, index_path, key_path
from analyzer.segmenters.anthropic_segmenter import anthropic_segments
from analyzer.segmenters.canonical import Segment
from analyzer.segmenters.gemini_segmenter import gemini_segments
from analyzer.segmenters.openai_segmenter import (
    openai_chat_segments,
    openai_completions_segments,
    openai_responses_segments,
)

__all__ = [
    "ANTHROPIC",
    "GEMINI",
    "OPENAI",
    "Seen",
    "Segment",
    "anthropic_segments",
    "gemini_segments",
    "guess_shape",
    "last_message_start",
    "openai_chat_segments",
    "openai_completions_segments",
    "openai_responses_segments",
    "segment_strings",
    "segments_for",
    "total_bytes",
]

ANTHROPIC = "anthropic"
OPENAI = "openai"
GEMINI = "gemini"
GEMINI_PROMPT_METHODS = (":generateContent", ":streamGenerateContent", ":countTokens")
# Structural ids the API requires, images and data, signatures, markers: not prompt prose, and
# they repeat unchanged across the turns of a conversation.
SKIP_KEYS = frozenset(
    {
        "id",
        "tool_call_id",
        "tool_use_id",
        "call_id",
        "signature",
        "encrypted_content",
        "data",
        "image_url",
        "file_id",
        "cache_control",
        "type",
        "role",
        "name",
        "model",
    }
)


@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the miss diagnosis and the divergence engine compare it."""

    provider: str
    model: str
    ts: float
    segments: Sequence[Segment]


def segments_for(provider: str, route: str, body: Any) -> list[Segment]:
    """Segments of ``body`` sent to ``route`` (a path such as ``/v1/chat/completions``).

    Routes without prompt caching (embeddings, models, …) give ``[]``.
    """
    if not isinstance(body, dict):
        return []
    route = route.rstrip("/")
    if provider == ANTHROPIC:
        return (
            anthropic_segments(body) if route.endswith("/messages") or route.endswith("/count_tokens") else []
        )
    if provider == GEMINI:
        return gemini_segments(body) if route.endswith(GEMINI_PROMPT_METHODS) else []
    if route.endswith("/chat/completions"):
        return openai_chat_segments(body)
    if route.endswith("/responses") or route.endswith("/responses/compact"):
        return openai_responses_segments(body)
    if route.endswith("/completions"):
        return openai_completions_segments(body)
    return []


def guess_shape(body: Any) -> tuple[str, str] | None:
    """(provider, route) for a bare body in a log, or None when it is no known request."""
    if not isinstance(body, dict):
        return None
    if "contents" in body and "messages" not in body:
        model = body.get("model") if isinstance(body.get("model"), str) else "model"
        return GEMINI, f"/v1beta/models/{model.rsplit('/', 1)[-1]}:generateContent"
    if "messages" in body:
        if (
            "system" in body
            or "max_tokens" in body
            and "anthropic_version" in body
            or _has_anthropic_blocks(body)
        ):
            return ANTHROPIC, "/v1/messages"
        return OPENAI, "/v1/chat/completions"
    if (
        isinstance(body.get("system"), (str, list))
        and body["system"]
        and "model" in body
        and not any(isinstance(body.get(k), dict) for k in ("request", "body", "data"))
    ):
        return ANTHROPIC, "/v1/messages"  # a logged body whose messages were left out: its system prompt
    if "input" in body or "instructions" in body:
        return OPENAI, "/v1/responses"
    if "prompt" in body:
        return OPENAI, "/v1/completions"
    return None


def _has_anthropic_blocks(body: dict[str, Any]) -> bool:
    def blocks() -> Iterator[Any]:
        messages, tools = body.get("messages"), body.get("tools")
        for msg in messages if isinstance(messages, list) else ():
            if isinstance(msg, dict) and isinstance(msg.get("content"), list):
                yield from msg["content"]
        yield from tools if isinstance(tools, list) else ()

    for block in blocks():
        if isinstance(block, dict) and (
            "cache_control" in block
            or block.get("type") in ("tool_use", "tool_result")
            or "input_schema" in block
        ):
            return True
    return False


def total_bytes(segments: Iterable[Segment]) -> int:
    return sum(len(s.data) for s in segments)


def last_message_start(segments: Sequence[Segment]) -> int:
    """Index of the first segment of the last message (or prompt); ``len(segments)`` when there is none."""
    last, head = len(segments), None
    for i, s in enumerate(segments):
        if s.kind in ("message", "prompt"):
            h = JsonPath.parse(s.path)[:2]  # "messages[2].content[0]" -> ("messages", 2)
            if h != head:
                last, head = i, h
    return last


def prompt_strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(field path, text) of every prompt string under ``value`` (found at ``path``), skipping
    :data:`SKIP_KEYS` and ``data:`` URLs."""
    if isinstance(value, str):
        if not value.startswith("data:"):
            yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in SKIP_KEYS:
                yield from prompt_strings(v, key_path(path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from prompt_strings(v, index_path(path, i))


def segment_strings(body: Any, segment: Segment) -> Iterator[tuple[str, str]]:
    """(field path, text) of every prompt string of ``segment``, read from the ``body`` it was cut from."""
    return prompt_strings(JsonPath.parse(segment.path).get(body), segment.path)
