"""OpenAI's Responses API (``/v1/responses``), text in and text out: request bodies and response objects.

``parse_responses`` reads ``input`` (a string, or messages of text parts), ``instructions``,
``max_output_tokens``, ``temperature``, ``top_p`` and ``stream``; tools, images, files, reasoning and
``previous_response_id`` are refused with a 400 naming the field. ``ResponsesBuilder`` writes the
``response`` object (one ``message`` item, one ``output_text`` part, usage with cached tokens) and the
stream's named events, from ``response.created`` to ``response.completed`` (or ``response.incomplete``);
the full list is in docs/engine.md. It does not run the model.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kvcache.params import SamplingParams
from kvcache.server.protocol import RequestError, _number

REFUSED = ("tools", "previous_response_id", "reasoning", "conversation")
TEXT_PARTS = ("input_text", "output_text", "text")


@dataclass
class ResponsesRequest:
    messages: list[dict[str, str]]
    max_tokens: int | None = None
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stream: bool = False
    body: dict[str, Any] = field(default_factory=dict)


def parse_responses(body: Any) -> ResponsesRequest:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    for name in REFUSED:
        if body.get(name):
            raise RequestError(f"{name} is not supported by this local engine (text in, text out)", name)
    messages = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise RequestError("instructions must be a string", "instructions")
        messages.append({"role": "system", "content": instructions})
    raw = body.get("input")
    if isinstance(raw, str) and raw:
        messages.append({"role": "user", "content": raw})
    elif isinstance(raw, list) and raw:
        messages.extend(_item(item, i) for i, item in enumerate(raw))
    else:
        raise RequestError("input must be a non-empty string or a non-empty list of messages", "input")
    limit = body.get("max_output_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise RequestError("max_output_tokens must be a positive integer", "max_output_tokens")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("stream must be true or false", "stream")
    sampling = SamplingParams(
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0), top_p=_number(body, "top_p", 1.0, 1e-9, 1.0)
    )
    return ResponsesRequest(messages, limit, sampling, bool(stream), body)


def _item(item: Any, index: int) -> dict[str, str]:
    where = f"input[{index}]"
    if (
        not isinstance(item, dict)
        or item.get("type", "message") != "message"
        or not isinstance(item.get("role"), str)
    ):
        raise RequestError(
            f"{where} must be a message with a role (other input items are not supported)", "input"
        )
    content = item.get("content")
    if isinstance(content, list):
        texts = []
        for part in content:
            if (
                not isinstance(part, dict)
                or part.get("type") not in TEXT_PARTS
                or not isinstance(part.get("text"), str)
            ):
                raise RequestError(f"{where}.content: only text parts are supported", "input")
            texts.append(part["text"])
        content = "".join(texts)
    if not isinstance(content, str):
        raise RequestError(f"{where}.content must be a string or a list of text parts", "input")
    role = "system" if item["role"] == "developer" else item["role"]
    return {"role": role, "content": content}


class ResponsesBuilder:
    def __init__(self, model: str, request: ResponsesRequest):
        self.model, self.request = model, request
        self.id = "resp_" + uuid.uuid4().hex
        self.item_id = "msg_" + uuid.uuid4().hex
        self.created = int(time.time())
        self.sequence = 0

    def response(self, text: str | None, finish_reason: str | None = None, usage: dict | None = None) -> dict:
        """The response object: in progress (``text`` None) or done."""
        done = text is not None
        incomplete = done and finish_reason == "length" and self.request.max_tokens is not None
        body = self.request.body
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": ("incomplete" if incomplete else "completed") if done else "in_progress",
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": self.request.max_tokens,
            "model": self.model,
            "output": [self.item(text, "completed")] if done else [],
            "parallel_tool_calls": True,
            "temperature": self.request.sampling.temperature,
            "top_p": self.request.sampling.top_p,
            "tool_choice": "auto",
            "tools": [],
            "text": {"format": {"type": "text"}},
            "usage": usage,
        }

    def item(self, text: str | None, status: str) -> dict:
        content = [] if text is None else [self.part(text)]
        return {
            "type": "message",
            "id": self.item_id,
            "status": status,
            "role": "assistant",
            "content": content,
        }

    @staticmethod
    def part(text: str) -> dict:
        return {"type": "output_text", "text": text, "annotations": []}

    def event(self, kind: str, **fields: Any) -> tuple[str, dict]:
        payload = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return kind, payload

    def opening(self) -> list[tuple[str, dict]]:
        at = {"item_id": self.item_id, "output_index": 0, "content_index": 0}
        return [
            self.event("response.created", response=self.response(None)),
            self.event("response.in_progress", response=self.response(None)),
            self.event("response.output_item.added", output_index=0, item=self.item(None, "in_progress")),
            self.event("response.content_part.added", **at, part=self.part("")),
        ]

    def delta(self, piece: str) -> tuple[str, dict]:
        return self.event(
            "response.output_text.delta",
            item_id=self.item_id,
            output_index=0,
            content_index=0,
            delta=piece,
            logprobs=[],
        )

    def closing(self, text: str, finish_reason: str, usage: dict) -> list[tuple[str, dict]]:
        at = {"item_id": self.item_id, "output_index": 0, "content_index": 0}
        final = self.response(text, finish_reason, usage)
        return [
            self.event("response.output_text.done", **at, text=text, logprobs=[]),
            self.event("response.content_part.done", **at, part=self.part(text)),
            self.event("response.output_item.done", output_index=0, item=self.item(text, "completed")),
            self.event(f"response.{final['status']}", response=final),
        ]


def responses_usage(prompt_tokens: int, cached_tokens: int, output_tokens: int) -> dict:
    return {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt_tokens + output_tokens,
    }
