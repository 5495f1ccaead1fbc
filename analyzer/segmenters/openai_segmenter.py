"""OpenAI bodies → segments in the cache's order: Chat Completions, Responses and Completions.

Tools (``functions`` too), a JSON schema, Responses' ``instructions``, then one segment per
message or input item, its keys in one order and a string ``content`` spelled as one text part.
A ``prompt_cache_breakpoint`` on a part (GPT-5.6 and later) is dropped from the bytes and makes
its segment end at a breakpoint of the part's ``ttl`` (``30m`` or ``12h``), else the request's.

It never raises on odd bodies: fields of the wrong type are skipped or kept whole.
"""

from __future__ import annotations

from typing import Any

from analyzer.jsonpath import index_path
from analyzer.segmenters.canonical import Segment, make_segment, text_blocks

BREAKPOINT = "prompt_cache_breakpoint"
OPENAI_TTLS = ("30m", "12h")


def _unmarked(parts: Any) -> tuple[Any, tuple[str, ...] | None]:
    """(``parts`` without ``prompt_cache_breakpoint`` keys, the ``ttl`` of each marked part: its
    own, ``""`` when it names none; None when no part is marked)."""
    if not isinstance(parts, list) or not any(isinstance(p, dict) and BREAKPOINT in p for p in parts):
        return parts, None
    ttls: list[str] = []
    out = []
    for p in parts:
        if isinstance(p, dict) and BREAKPOINT in p:
            mark = p[BREAKPOINT]
            own = mark.get("ttl") if isinstance(mark, dict) else None
            ttls.append(own if own in OPENAI_TTLS else "")
            p = {k: v for k, v in p.items() if k != BREAKPOINT}
        out.append(p)
    return out, tuple(ttls)


def _openai_message(msg: Any, responses: bool = False) -> tuple[Any, tuple[str, ...] | None]:
    """(canonical message or item, the ttls of the breakpoints in it: see :func:`_unmarked`).
    A string ``content`` is one text part (Responses: ``input_text``, ``output_text`` for the
    assistant), the spelling a marker needs."""
    if not isinstance(msg, dict):
        return msg, None
    canon: dict[str, Any] = {"role": msg.get("role")}
    ttls = None
    if "content" in msg:
        text_type = (
            ("output_text" if msg.get("role") == "assistant" else "input_text") if responses else "text"
        )
        canon["content"], ttls = _unmarked(text_blocks(msg["content"], text_type))
    for key in sorted(k for k in msg if k not in ("role", "content")):
        canon[key] = msg[key]
    if isinstance(msg.get("output"), list):
        # a function_call_output's parts
        canon["output"], out_ttls = _unmarked(msg["output"])
        if out_ttls is not None:
            ttls = (*(ttls or ()), *out_ttls)
    return canon, ttls


def _longest_ttl(ttls: tuple[str, ...], default: str) -> str:
    """The longest of the markers' TTLs (one naming none takes ``default``, the request's)."""
    return "12h" if any((t or default) == "12h" for t in ttls) else "30m"


def request_ttl(body: dict[str, Any]) -> str:
    """The TTL a GPT-5.6 request asks for its breakpoints (``prompt_cache_options.ttl``, default 30m)."""
    options = body.get("prompt_cache_options")
    ttl = options.get("ttl") if isinstance(options, dict) else None
    return ttl if ttl in OPENAI_TTLS else "30m"


def _schema_segment(body: dict[str, Any], out: list[Segment]) -> None:
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        out.append(make_segment("schema", "response_format", fmt))
    text = body.get("text")
    if (
        isinstance(text, dict)
        and isinstance(text.get("format"), dict)
        and text["format"].get("type") == "json_schema"
    ):
        out.append(make_segment("schema", "text.format", text["format"]))


def _tool_segments(body: dict[str, Any], out: list[Segment]) -> None:
    """``tools``, and ``functions``, the deprecated spelling."""
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(make_segment("tool", index_path("tools", i), tool))
    functions = body.get("functions")
    if isinstance(functions, list):
        for i, fn in enumerate(functions):
            out.append(make_segment("tool", index_path("functions", i), fn))


def _message_segments(
    items: list[Any], field: str, default_tag: str, out: list[Segment], ttl: str, responses: bool = False
) -> None:
    """One segment per OpenAI message / input item, tagged with its role; a marked part makes
    it end at a breakpoint of its own ttl, else ``ttl`` (the request's); with several marked
    parts, the longest of their ttls (so a 12-hour one is never lost)."""
    for i, item in enumerate(items):
        role = item.get("role") if isinstance(item, dict) and isinstance(item.get("role"), str) else None
        canon, marks = _openai_message(item, responses)
        out.append(
            make_segment(
                "message",
                index_path(field, i),
                canon,
                tag=role or default_tag,
                role=role,
                cache_control=None if marks is None else _longest_ttl(marks, ttl),
            )
        )


def openai_chat_segments(body: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    _tool_segments(body, out)
    _schema_segment(body, out)
    messages = body.get("messages")
    if isinstance(messages, list):
        _message_segments(messages, "messages", "?", out, request_ttl(body))
    return out


def openai_responses_segments(body: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    _tool_segments(body, out)
    _schema_segment(body, out)
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append(make_segment("instructions", "instructions", instructions, role="system"))
    items = body.get("input")
    if isinstance(items, str):
        canon = _openai_message({"role": "user", "content": items}, True)[0]
        out.append(make_segment("message", "input", canon, tag="user", role="user"))
    elif isinstance(items, list):
        _message_segments(items, "input", "item", out, request_ttl(body), responses=True)
    return out


def openai_completions_segments(body: dict[str, Any]) -> list[Segment]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [make_segment("prompt", "prompt", prompt)]
    if isinstance(prompt, list) and prompt:
        return [make_segment("prompt", index_path("prompt", 0), prompt[0])]
    return []
