"""Files → what the rules read: source files, parsed requests, and text units with positions.

A prompt file is one cacheable :class:`TextUnit`; a source file gives one per prompt-like literal
(:mod:`analyzer.lint.sources`), volatile values already judged; a JSON/JSONL file gives
:class:`Request` objects (shape, segments in cache order, and the *boundary*: how many leading
segments are cacheable, by breakpoints or else all but the last message), whose prompt strings
are text units mapping indexes to line/column (:mod:`.jsonpos`).

It does NOT report anything, and structural ids, images, ``data:`` URLs, signatures and
encrypted content are not text units (they repeat unchanged). See docs/lint.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from analyzer.cache_rules.openai import OPTIONS_KEY, uses_breakpoints
from analyzer.jsonpath import join_path
from analyzer.lint import jsonpos
from analyzer.segments import Segment, guess_shape, last_message_start, segment_strings, segments_for

BOM = "\ufeff"


@dataclass
class SourceFile:
    #: as shown in findings
    path: str
    data: bytes
    #: decoded, BOM removed
    text: str
    has_bom: bool
    #: "text" | "json" | "jsonl"
    kind: str

    @cached_property
    def line_starts(self) -> list[int]:
        return jsonpos.line_starts_of(self.text)

    def line_col(self, offset: int) -> tuple[int, int]:
        return jsonpos.line_col(self.text, offset, self.line_starts)


@dataclass
class TextUnit:
    text: str
    field: str | None
    cacheable: bool
    #: index in text → (line, col) in the file
    position: Callable[[int], tuple[int, int]]
    #: index of the request segment holding it
    segment: int | None = None
    #: where a value ending at an index ends (default: position)
    end_position: Callable[[int], tuple[int, int]] | None = None

    def end(self, index: int) -> tuple[int, int]:
        return (self.end_position or self.position)(index)


@dataclass
class Request:
    file: SourceFile
    #: 1-based line of the file where this document starts
    line: int
    #: the JSON text the positions refer to
    raw: str
    #: offset of ``raw`` in ``file.text``
    raw_base: int
    #: path of the body inside ``raw`` ("", "request", "[3]")
    body_path: str
    body: dict[str, Any]
    record: dict[str, Any] | None
    provider: str
    route: str
    #: order in the input (0-based across the file)
    index: int
    segments: list[Segment] = field(default_factory=list)
    #: the key a bare messages array was wrapped in to read it as a body ("messages"): not in ``raw``
    wrapped: str = ""

    @property
    def model(self) -> str:
        model = self.body.get("model") or (self.record or {}).get("model")
        return model if isinstance(model, str) else ""

    @property
    def session(self) -> str | None:
        rec = self.record or {}
        meta = self.body.get("metadata") if isinstance(self.body.get("metadata"), dict) else {}
        for value in (
            rec.get("session_id"),
            rec.get("session"),
            rec.get("conversation_id"),
            self.body.get("prompt_cache_key"),
            self.body.get("user"),
            meta.get("user_id"),
            meta.get("session_id"),
        ):
            if isinstance(value, (str, int)) and value != "":
                return str(value)
        return None

    @cached_property
    def spans(self) -> dict[str, tuple[int, int]]:
        try:
            return jsonpos.locate(self.raw)
        except RecursionError:  # absurdly deep JSON: positions fall back to the document start
            return {}

    def position(self, path: str, index: int | None = None) -> tuple[int, int]:
        """(line, col) in the file of body field ``path`` (char ``index`` of it when a string)."""
        if self.wrapped and path.startswith(self.wrapped):
            path = path[len(self.wrapped) :]  # "messages[0].content" of a bare array is its "[0].content"
        full = join_path(self.body_path, path)
        span = self.spans.get(full) or self.spans.get(self.body_path) or (0, 0)
        offset = jsonpos.string_offset(self.raw, span[0], index) if index is not None else span[0]
        return self.file.line_col(self.raw_base + offset)

    @cached_property
    def boundary(self) -> int:
        segs = self.segments
        marks = [i for i, s in enumerate(segs) if s.cache_control]
        if marks and self.provider == "openai" and uses_breakpoints(self.model) and not self._explicit_mode:
            # GPT-5.6+ implicit mode: the implicit breakpoint at the newest message caches the history too
            return max(marks[-1] + 1, last_message_start(segs))
        if marks:
            return marks[-1] + 1
        last = last_message_start(segs)
        turns = [s for s in segs[: last + 1] if s.kind == "message"]
        if last < len(segs) and turns and all(s.role in ("system", "developer") for s in turns):
            return len(segs)  # a body logged without any turn: its system messages are all the head
        return last

    @property
    def _explicit_mode(self) -> bool:
        options = self.body.get(OPTIONS_KEY)
        return isinstance(options, dict) and options.get("mode") == "explicit"

    def units(self) -> list[TextUnit]:
        out: list[TextUnit] = []
        for i, seg in enumerate(self.segments):
            for path, text in segment_strings(self.body, seg):
                out.append(
                    TextUnit(text, path, i < self.boundary, lambda idx, p=path: self.position(p, idx), i)
                )
        return out


def text_unit(src: SourceFile) -> TextUnit:
    return TextUnit(src.text, None, True, src.line_col)


def request_from(
    src: SourceFile, value: Any, *, line: int, raw: str, raw_base: int, base_path: str, index: int
) -> Request | None:
    """A :class:`Request` for a parsed JSON value, or None when it is not a request body. A bare
    array of a conversation's items (a debug dump of ``messages`` or ``input``) reads as that body."""
    if key := messages_array(value):
        req = request_from(
            src, {key: value}, line=line, raw=raw, raw_base=raw_base, base_path=base_path, index=index
        )
        if req is not None:
            req.wrapped = key
        return req
    record = None
    body, body_path = value, base_path
    for _ in range(3):  # a log record's "request", "body" or "data", or one of these inside another
        if guess_shape(body) is not None or not isinstance(body, dict):
            break
        key = next((k for k in ("request", "body", "data") if isinstance(body.get(k), dict)), "")
        if not key:
            break
        record = record or body
        body, body_path = body[key], join_path(body_path, key)
    shape = guess_shape(body)
    if shape is None:
        return None
    provider, route = shape
    if record and isinstance(record.get("provider"), str) and record["provider"] in ("openai", "anthropic"):
        provider = record["provider"]
        route = record.get("route") if isinstance(record.get("route"), str) else route
    req = Request(src, line, raw, raw_base, body_path, body, record, provider, route, index)
    req.segments = segments_for(provider, route, body)
    return req


def messages_array(value: Any) -> str:
    """The body key a bare JSON array of a conversation's items stands for: "messages" when every
    item is a chat message (a ``role`` and a ``content``), "input" when some are Responses items
    (``{"type": "function_call", …}``) beside messages; "" for any other value."""
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) for m in value):
        return ""
    if all(isinstance(m.get("role"), str) and "content" in m for m in value):
        return "messages"
    roles = any(isinstance(m.get("role"), str) for m in value)
    return "input" if roles and all(isinstance(m.get("role") or m.get("type"), str) for m in value) else ""
