"""A provider request body → its cache-relevant segments, in the provider's cache order.

Anthropic Messages, OpenAI Chat Completions / Responses / Completions and Gemini bodies are
cut into the pieces that render in cache order, each as canonical bytes (compact JSON, cache
markers dropped and recorded as breakpoints, equivalent spellings made equal, a kind/role tag
first). Paths are :mod:`analyzer.jsonpath` text; :class:`Seen` is one request as the miss
diagnosis compares it; :func:`segment_strings` gives the prompt strings inside a segment.

It does NOT hash (see :mod:`analyzer.prefix`) and never raises on odd bodies: fields of the
wrong type are skipped. See docs/request-path.md for each provider's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from analyzer.jsonpath import JsonPath, index_path, key_path

ANTHROPIC = "anthropic"
OPENAI = "openai"
GEMINI = "gemini"
HEAD_KINDS = frozenset({"cached", "tool", "schema", "system", "instructions"})
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
class Segment:
    #: "cached" (Gemini's cachedContent), "tool", "schema", "system", "instructions", "message", "prompt"
    kind: str
    #: field path in the body, e.g. "messages[2].content[0]"
    path: str
    #: canonical bytes (what is hashed)
    data: bytes
    #: the TTL of a breakpoint that ends this segment: "5m" / "1h" (Anthropic), "30m" / "12h" (OpenAI)
    cache_control: str | None = None
    role: str | None = None

    def __len__(self) -> int:
        return len(self.data)

    @property
    def body(self) -> bytes:
        """The canonical JSON, without the kind/role tag."""
        _, sep, rest = self.data.partition(b"\x1f")
        return rest if sep else self.data

    @property
    def in_head(self) -> bool:
        """Part of the request's stable head (tools, schemas, system/developer text), not the conversation."""
        return self.kind in HEAD_KINDS or self.role in ("system", "developer")


@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the miss diagnosis and the divergence engine compare it."""

    provider: str
    model: str
    ts: float
    segments: Sequence[Segment]


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # numbers out of range and the like: fall back to repr, never raise
        return repr(value).encode("utf-8", "replace")


def _strip_cache_control(value: Any) -> Any:
    """Drop ``cache_control`` from a block and from the blocks nested in its ``content``
    (a ``tool_result`` may carry markers on its inner text blocks)."""
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if k != "cache_control"}
    inner = out.get("content")
    if isinstance(inner, list) and any(isinstance(b, dict) and "cache_control" in b for b in inner):
        out["content"] = [_strip_cache_control(b) for b in inner]
    return out


def _ttl(block: Any) -> str | None:
    """The breakpoint a block carries: its own marker, else one on a nested content block."""
    if not isinstance(block, dict):
        return None
    cc = block.get("cache_control")
    if not isinstance(cc, dict):
        inner = block.get("content")
        if isinstance(inner, list):
            marks = [_ttl(b) for b in inner if isinstance(b, dict) and "content" not in b]
            return next((m for m in reversed(marks) if m), None)
        return None
    return "1h" if cc.get("ttl") == "1h" else "5m"


def _seg(
    kind: str,
    path: str,
    value: Any,
    *,
    tag: str = "",
    cache_control: str | None = None,
    role: str | None = None,
) -> Segment:
    head = f"{kind}:{tag}\x1f".encode()
    return Segment(kind, path, head + _dumps(value), cache_control, role)


def _text_blocks(content: Any, text_type: str = "text") -> list[Any]:
    """Normalise a string-or-blocks content field into a list of blocks (a string is one
    ``text_type`` block: ``text``, or Responses' ``input_text`` / ``output_text``)."""
    if isinstance(content, str):
        return [{"type": text_type, "text": content}]
    if isinstance(content, list):
        return content
    if content is None:
        return []
    return [content]


# -- Anthropic ---------------------------------------------------------------------------


def anthropic_segments(body: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(
                _seg("tool", index_path("tools", i), _strip_cache_control(tool), cache_control=_ttl(tool))
            )
    system = body.get("system")
    if system is not None:
        blocks = _text_blocks(system)
        for j, block in enumerate(blocks):
            path = "system" if isinstance(system, str) else index_path("system", j)
            out.append(
                _seg("system", path, _strip_cache_control(block), cache_control=_ttl(block), role="system")
            )
    messages = body.get("messages")
    if isinstance(messages, list):
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                out.append(_seg("message", index_path("messages", i), msg))
                continue
            role = msg.get("role") if isinstance(msg.get("role"), str) else "?"
            content = msg.get("content")
            blocks = _text_blocks(content)
            field = key_path(index_path("messages", i), "content")
            for j, block in enumerate(blocks):
                path = field if isinstance(content, str) else index_path(field, j)
                tag = f"{role}:{j}"  # the block index keeps message boundaries in the hash
                out.append(
                    _seg(
                        "message",
                        path,
                        _strip_cache_control(block),
                        tag=tag,
                        cache_control=_ttl(block),
                        role=role,
                    )
                )
    return out


# -- OpenAI ------------------------------------------------------------------------------

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
        canon["content"], ttls = _unmarked(_text_blocks(msg["content"], text_type))
    for key in sorted(k for k in msg if k not in ("role", "content")):
        canon[key] = msg[key]
    if isinstance(msg.get("output"), list):  # a function_call_output's parts
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
        out.append(_seg("schema", "response_format", fmt))
    text = body.get("text")
    if (
        isinstance(text, dict)
        and isinstance(text.get("format"), dict)
        and text["format"].get("type") == "json_schema"
    ):
        out.append(_seg("schema", "text.format", text["format"]))


def _tool_segments(body: dict[str, Any], out: list[Segment]) -> None:
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(_seg("tool", index_path("tools", i), tool))
    functions = body.get("functions")  # the deprecated spelling
    if isinstance(functions, list):
        for i, fn in enumerate(functions):
            out.append(_seg("tool", index_path("functions", i), fn))


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
            _seg(
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
        out.append(_seg("instructions", "instructions", instructions, role="system"))
    items = body.get("input")
    if isinstance(items, str):
        out.append(
            _seg(
                "message",
                "input",
                _openai_message({"role": "user", "content": items}, True)[0],
                tag="user",
                role="user",
            )
        )
    elif isinstance(items, list):
        _message_segments(items, "input", "item", out, request_ttl(body), responses=True)
    return out


def openai_completions_segments(body: dict[str, Any]) -> list[Segment]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [_seg("prompt", "prompt", prompt)]
    if isinstance(prompt, list) and prompt:
        return [_seg("prompt", index_path("prompt", 0), prompt[0])]
    return []


# -- Gemini ------------------------------------------------------------------------------


def _field(body: dict[str, Any], camel: str, snake: str) -> tuple[str, Any]:
    """(the key as the body spells it, its value); camelCase wins when both are present."""
    if camel in body:
        return camel, body[camel]
    if snake in body:
        return snake, body[snake]
    return camel, None


def _parts(content: Any) -> tuple[str | None, list[Any]]:
    """(the key holding the parts, the parts) of a Gemini ``Content``; a bare string is one text part."""
    if isinstance(content, str):
        return None, [{"text": content}]
    if isinstance(content, dict):
        parts = content.get("parts")
        if isinstance(parts, list):
            return "parts", parts
        if isinstance(parts, (dict, str)):
            return "parts", [parts if isinstance(parts, dict) else {"text": parts}]
        return None, []
    if isinstance(content, list):
        return None, content
    return None, []


def gemini_segments(body: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    key, cached = _field(body, "cachedContent", "cached_content")
    if isinstance(cached, str) and cached:
        out.append(_seg("cached", key, cached))
    key, system = _field(body, "systemInstruction", "system_instruction")
    if system is not None:
        inner, parts = _parts(system)
        field = key_path(key, inner) if inner else key
        for j, part in enumerate(parts):
            path = field if isinstance(system, str) else index_path(field, j)
            out.append(_seg("system", path, part, role="system"))
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(_seg("tool", index_path("tools", i), tool))
    contents = body.get("contents")
    if isinstance(contents, (str, dict)):
        contents = [contents]
        single = True
    else:
        single = False
    if isinstance(contents, list):
        for i, content in enumerate(contents):
            where = "contents" if single else index_path("contents", i)
            role = (
                content.get("role")
                if isinstance(content, dict) and isinstance(content.get("role"), str)
                else "user"
            )
            inner, parts = _parts(content)
            if not parts and not isinstance(content, (dict, str)):
                out.append(_seg("message", where, content, tag=f"{role}:0", role=role))
                continue
            field = key_path(where, inner) if inner else where
            for j, part in enumerate(parts):
                path = field if isinstance(content, str) else index_path(field, j)
                out.append(_seg("message", path, part, tag=f"{role}:{j}", role=role))
    return out


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
    if "input" in body or "instructions" in body:
        return OPENAI, "/v1/responses"
    if "prompt" in body:
        return OPENAI, "/v1/completions"
    return None


def _has_anthropic_blocks(body: dict[str, Any]) -> bool:
    def blocks() -> Iterator[Any]:
        for msg in body.get("messages") or []:
            if isinstance(msg, dict) and isinstance(msg.get("content"), list):
                yield from msg["content"]
        yield from body.get("tools") or []

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
