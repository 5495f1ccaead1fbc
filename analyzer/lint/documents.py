"""Files → what the rules read: source files, parsed requests, and text units with positions.

- A prompt file (.txt, .md, templates) is one :class:`TextUnit`, all of it cacheable.
- A source file (.py, .js, .ts …) gives one :class:`TextUnit` per prompt-like literal or
  template (:mod:`analyzer.lint.sources`), each cacheable, with its volatile values already
  judged (interpolations by what they call).
- A JSON file holds one request body (bare, or ``{"request": body, …}``) or a list of them;
  a JSONL file holds one per line. Each becomes a :class:`Request`: provider and route
  (``analyzer.segments.guess_shape``), segments in cache order, and the *boundary*: how many
  leading segments form the cacheable prefix (Anthropic: up to the last ``cache_control``
  breakpoint; OpenAI GPT-5.6+: up to the last ``prompt_cache_breakpoint``, and in implicit mode
  at least everything before the last message, as the implicit breakpoint caches it; otherwise
  everything before the last message, which is the per-request tail).
- Every prompt string inside a segment (:func:`analyzer.segments.segment_strings`) is a
  :class:`TextUnit` that maps an index in the decoded string to a line and column in the
  file (:mod:`.jsonpos`); field paths are :mod:`analyzer.jsonpath` text.

Structural ids the API requires (``id``, ``tool_call_id``, ``tool_use_id``, …), images and
``data:`` URLs, signatures and encrypted content are not text units: they repeat unchanged
across the turns of a conversation and are not prompt prose. This module reports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from analyzer.cache_rules.openai import OPTIONS_KEY, uses_breakpoints
from analyzer.jsonpath import join_path
from analyzer.lint import jsonpos
from analyzer.segments import Segment, guess_shape, last_message_start, segment_strings, segments_for

BOM = "\ufeff"


@dataclass
class SourceFile:
    path: str  # as shown in findings
    data: bytes
    text: str  # decoded, BOM removed
    has_bom: bool
    kind: str  # "text" | "json" | "jsonl"

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
    position: Callable[[int], tuple[int, int]]  # index in text → (line, col) in the file
    segment: int | None = None  # index of the request segment holding it
    end_position: Callable[[int], tuple[int, int]] | None = None  # where a value ending at an index ends (default: position)

    def end(self, index: int) -> tuple[int, int]:
        return (self.end_position or self.position)(index)


@dataclass
class Request:
    file: SourceFile
    line: int  # 1-based line of the file where this document starts
    raw: str  # the JSON text the positions refer to
    raw_base: int  # offset of ``raw`` in ``file.text``
    body_path: str  # path of the body inside ``raw`` ("", "request", "[3]")
    body: dict[str, Any]
    record: dict[str, Any] | None
    provider: str
    route: str
    index: int  # order in the input (0-based across the file)
    segments: list[Segment] = field(default_factory=list)

    @property
    def model(self) -> str:
        model = self.body.get("model") or (self.record or {}).get("model")
        return model if isinstance(model, str) else ""

    @property
    def session(self) -> str | None:
        rec = self.record or {}
        meta = self.body.get("metadata") if isinstance(self.body.get("metadata"), dict) else {}
        for value in (rec.get("session_id"), rec.get("session"), rec.get("conversation_id"), self.body.get("prompt_cache_key"),
                      self.body.get("user"), meta.get("user_id"), meta.get("session_id")):
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
        return last_message_start(segs)

    @property
    def _explicit_mode(self) -> bool:
        options = self.body.get(OPTIONS_KEY)
        return isinstance(options, dict) and options.get("mode") == "explicit"

    def units(self) -> list[TextUnit]:
        out: list[TextUnit] = []
        for i, seg in enumerate(self.segments):
            for path, text in segment_strings(self.body, seg):
                out.append(TextUnit(text, path, i < self.boundary, lambda idx, p=path: self.position(p, idx), i))
        return out


def text_unit(src: SourceFile) -> TextUnit:
    return TextUnit(src.text, None, True, src.line_col)


def request_from(src: SourceFile, value: Any, *, line: int, raw: str, raw_base: int, base_path: str, index: int) -> Request | None:
    """A :class:`Request` for a parsed JSON value, or None when it is not a request body."""
    record = None
    body, body_path = value, base_path
    if isinstance(value, dict) and isinstance(value.get("request"), dict):
        record, body, body_path = value, value["request"], join_path(base_path, "request")
    elif isinstance(value, dict) and isinstance(value.get("body"), dict):
        record, body, body_path = value, value["body"], join_path(base_path, "body")
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

