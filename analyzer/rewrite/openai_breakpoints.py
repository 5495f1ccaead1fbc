"""``safe`` for OpenAI GPT-5.6 and later: ``prompt_cache_breakpoint`` markers where a prefix repeats.

Rewrites ``add-openai-breakpoints`` (at most two markers: the end of the head and the boundary
before the newest turn, each only where the prefix reaches 1,024 estimated tokens),
``instructions-as-developer`` (Responses: a string ``instructions`` moved into a leading
developer item, only under the conditions the docs list) and ``ttl-12h`` (the head marker).

It does NOT send a marker or ``prompt_cache_options`` to a model that does not use breakpoints,
touch the client's own markers, change message text, or mutate its input; an unforeseen body
shape is left alone. See docs/rewrite.md ("GPT-5.6 breakpoints", "Responses instructions").
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from analyzer.cache_rules import openai as openai_rules
from analyzer.segments import openai_chat_segments, openai_responses_segments
from analyzer.tokens import estimate_tokens

ADD_OPENAI_BREAKPOINTS = "add-openai-breakpoints"
INSTRUCTIONS_AS_DEVELOPER = "instructions-as-developer"
TTL_12H = "ttl-12h"
BREAKPOINT = openai_rules.BREAKPOINT_KEY
OPTIONS = openai_rules.OPTIONS_KEY
MARK = {"mode": "explicit"}
_PARTS = {
    "openai-chat": ("text", "image_url", "input_audio", "file"),
    "openai-responses": ("input_text", "input_image", "input_file"),
}
_HEAD_ROLES = ("system", "developer")
# Responses fields under which a moved instructions item would not be read as the instructions were (module docstring)
_KEEPS_INSTRUCTIONS = ("previous_response_id", "conversation", "prompt", "context_management")


def place_openai_breakpoints(
    api: str, body: dict[str, Any], *, model: str | None, ttl_12h: bool = False
) -> tuple[dict[str, Any] | None, list[str]]:
    """(the body with markers, or None when nothing changed; the rewrite ids applied)."""
    try:
        if api not in _PARTS or not isinstance(body, dict) or not openai_rules.uses_breakpoints(model):
            return None, []
        if OPTIONS in body:
            return None, []
        return _place(api, body, ttl_12h)
    except Exception:  # a body shape this module did not foresee: forward it untouched
        return None, []


def has_marker(value: Any) -> bool:
    """True when a ``prompt_cache_breakpoint`` key sits anywhere in ``value``."""
    if isinstance(value, dict):
        return BREAKPOINT in value or any(has_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(has_marker(v) for v in value)
    return False


def _place(api: str, body: dict[str, Any], ttl_12h: bool) -> tuple[dict[str, Any] | None, list[str]]:
    responses = api == "openai-responses"
    field = "input" if responses else "messages"
    items = body.get(field)
    if responses and isinstance(items, str):
        items = [{"role": "user", "content": items}]  # the same segment bytes (analyzer.segments)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items) or has_marker(items):
        return None, []
    segments = (openai_responses_segments if responses else openai_chat_segments)(body)
    ends = dict(zip((s.path for s in segments), accumulate(len(s.data) for s in segments)))
    string_input = responses and isinstance(body.get(field), str)

    def reaches(i: int) -> bool:
        end = ends.get("input" if string_input else f"{field}[{i}]")
        return end is not None and estimate_tokens(end) >= openai_rules.MIN_TOKENS

    head = 0
    while head < len(items) and _is_head(items[head], responses):
        head += 1
    turn = len(items)
    while turn > head and _is_user_side(items[turn - 1], responses):
        turn -= 1
    marks: dict[int, dict[str, str]] = {}
    head_mark = {**MARK, "ttl": "12h"} if ttl_12h else dict(MARK)
    at = _last_markable(items, api, head - 1, -1)
    if at is not None and reaches(at):
        marks[at] = head_mark
    instructions = body.get("instructions")
    move = (
        responses
        and head == 0
        and isinstance(instructions, str)
        and bool(instructions)
        and body.get("store") is False
        and all(body.get(k) is None for k in _KEEPS_INSTRUCTIONS)
        and body.get("truncation") != "auto"
        and estimate_tokens(ends.get("instructions", 0)) >= openai_rules.MIN_TOKENS
    )
    at = _last_markable(items, api, turn - 1, head - 1) if turn > head else None
    if at is not None and at not in marks and reaches(at):
        marks[at] = dict(MARK)
    if not marks and not move:
        return None, []
    out_items = [_marked(item, api, marks[i]) if i in marks else item for i, item in enumerate(items)]
    applied = [ADD_OPENAI_BREAKPOINTS]
    new = dict(body)
    if move:
        developer = {
            "role": "developer",
            "content": [{"type": "input_text", "text": instructions, BREAKPOINT: head_mark}],
        }
        out_items = [developer, *out_items]
        del new["instructions"]
        applied.append(INSTRUCTIONS_AS_DEVELOPER)
    if ttl_12h and (move or any(i < head for i in marks)):
        applied.append(TTL_12H)
    new[field] = out_items
    return new, applied


def _is_head(item: dict[str, Any], responses: bool) -> bool:
    return item.get("role") in _HEAD_ROLES and (not responses or item.get("type", "message") == "message")


def _is_user_side(item: dict[str, Any], responses: bool) -> bool:
    """A part of the newest turn: what the user or a tool sent, not what the model said."""
    if item.get("role") in ("user", "tool", "function"):
        return True
    kind = item.get("type")
    return (
        responses and isinstance(kind, str) and (kind.endswith("_output") or kind == "mcp_approval_response")
    )


def _last_markable(items: list[dict[str, Any]], api: str, start: int, stop: int) -> int | None:
    """The index of the last item in ``items[stop+1 .. start]`` that can carry a marker."""
    for i in range(start, stop, -1):
        if _target(items[i], api) is not None:
            return i
    return None


def _target(item: dict[str, Any], api: str) -> tuple[str, int | None] | None:
    """Where a marker on ``item`` goes: (field, part index; None: the string becomes one part)."""
    responses = api == "openai-responses"
    if responses and item.get("type", "message") != "message":
        output = item.get("output")  # a function_call_output's parts (a string output stays a string)
        j = _last_part(output, api)
        return ("output", j) if j is not None else None
    content = item.get("content")
    if isinstance(content, str):
        if not content or item.get("role") == "function" or (responses and item.get("role") == "assistant"):
            return None  # Chat function messages take only a string; Responses assistant text is output_text
        return "content", None
    j = _last_part(content, api)
    return ("content", j) if j is not None else None


def _last_part(parts: Any, api: str) -> int | None:
    if not isinstance(parts, list):
        return None
    for j in range(len(parts) - 1, -1, -1):
        part = parts[j]
        if isinstance(part, dict) and part.get("type") in _PARTS[api]:
            text = part.get("text")
            if part["type"] in ("text", "input_text") and not (isinstance(text, str) and text):
                continue
            return j
    return None


def _marked(item: dict[str, Any], api: str, mark: dict[str, str]) -> dict[str, Any]:
    where = _target(item, api)
    assert where is not None
    field, j = where
    if j is None:
        kind = "input_text" if api == "openai-responses" else "text"
        return {**item, field: [{"type": kind, "text": item[field], BREAKPOINT: dict(mark)}]}
    parts = list(item[field])
    parts[j] = {**parts[j], BREAKPOINT: dict(mark)}
    return {**item, field: parts}
