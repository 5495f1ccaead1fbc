"""``aggressive``: move volatile values out of the cacheable head, never drop them.

Each value :func:`.movable.movable` finds in the head (tools, system prompt, ``instructions``)
is replaced by :data:`MARKER` and goes, with its label, to the end of the latest user turn in a
``<context moved from the system prompt>`` block; an Anthropic system block volatile as a whole
moves entire, passing on its ``cache_control``.

It does NOT drop a value or change the head's wording. See docs/rewrite.md ("aggressive").
"""

from __future__ import annotations

import re
from typing import Any

from .movable import Span, movable

MOVE_VALUES = "move-volatile-values"
MOVE_BLOCKS = "move-volatile-blocks"
MARKER = "[see the end of the latest user message]"
OPEN, CLOSE = "<context moved from the system prompt>", "</context>"
_WORDY = re.compile(r"[^\W\d_]{2,}")


_MARKS = str.maketrans("", "", '"“”{}[]')


def _line(label: str, value: str) -> str:
    # one line, without a heading's marks or the brackets and quotes of the JSON it sat in
    label = " ".join(label.translate(_MARKS).split()).lstrip("# ")
    if not label:
        return value
    return label + value if label.endswith("=") else f"{label} {value}"


def _mask(text: str, spans: tuple[Span, ...]) -> tuple[str, list[str]]:
    """``text`` with each value replaced by the marker, and the moved ``label value`` lines."""
    out, lines, at = [], [], 0
    for s in spans:
        out.append(text[at : s.start])
        out.append(MARKER)
        lines.append(_line(text[s.label_start : s.start], text[s.start : s.end]))
        at = s.end
    out.append(text[at:])
    return "".join(out), lines


def _whole(text: str, spans: tuple[Span, ...]) -> bool:
    """Nothing but short labels and values: the block is volatile as a whole (an
    instruction that merely ends in a value is not: its words stay in the system prompt)."""
    rest, at = [], 0
    for s in spans:
        rest.append(text[at : s.start])
        at = s.end
    rest.append(text[at:])
    words = _WORDY.findall(" ".join(rest))
    return len(words) <= 3 * len(spans) and sum(map(len, words)) <= 16 * len(spans)


class _Moves:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.applied: list[str] = []

    def text(self, text: Any, context: str = "prompt") -> Any:
        if not isinstance(text, str):
            return text
        for _ in range(4):  # a value glued to the next shows that one once masked: until none is left
            spans = movable(text, context)
            if not spans:
                break
            text, lines = _mask(text, spans)
            self.lines += lines
            if MOVE_VALUES not in self.applied:
                self.applied.append(MOVE_VALUES)
        return text

    def parts(self, content: Any, text_type: str = "text") -> Any:
        """A message content: a string, or a list of parts with text."""
        if isinstance(content, str):
            return self.text(content)
        if not isinstance(content, list):
            return content
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == text_type and isinstance(part.get("text"), str):
                new = self.text(part["text"])
                part = part if new is part["text"] else {**part, "text": new}
            out.append(part)
        return out

    def descriptions(self, value: Any) -> Any:
        """Every ``description`` string inside a tool definition, read as a description; a schema's
        sample values (``examples``, ``default``, ``enum``, ``const``) are data, left as they are."""
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in _SAMPLES:
                    out[k] = v
                elif k == "description" and isinstance(v, str):
                    out[k] = self.text(v, "description")
                else:
                    out[k] = self.descriptions(v)
            return out
        if isinstance(value, list):
            return [self.descriptions(v) for v in value]
        return value


#: JSON-schema keys whose values are sample data, not descriptions
_SAMPLES = frozenset(("examples", "example", "default", "enum", "const"))


def _context(lines: list[str]) -> str:
    return "\n".join([OPEN, *lines, CLOSE])


def _anthropic_system(system: Any, moves: _Moves) -> tuple[Any, Any]:
    """The system with its values masked and volatile blocks out, and a ``cache_control``
    left without a block (the first block moved, nothing before it to carry it)."""
    if isinstance(system, str):
        return moves.text(system), None
    if not isinstance(system, list):
        return system, None
    out: list[Any] = []
    orphan = None  # a moved block's marker waiting for the next kept block
    for block in system:
        if not (
            isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ):
            out.append(block)
            continue
        spans = movable(block["text"])
        if spans and _whole(block["text"], spans):
            moves.lines.append(block["text"].strip())
            if MOVE_BLOCKS not in moves.applied:
                moves.applied.append(MOVE_BLOCKS)
            if "cache_control" in block:
                if out and isinstance(out[-1], dict):
                    out[-1] = {**out[-1], "cache_control": block["cache_control"]}
                else:
                    orphan = block["cache_control"]
            continue
        new = moves.text(block["text"])
        block = block if new is block["text"] else {**block, "text": new}
        if orphan is not None and "cache_control" not in block:
            block, orphan = {**block, "cache_control": orphan}, None
        out.append(block)
    return out, orphan


def _append_anthropic(messages: list[Any], ctx: str) -> list[Any] | None:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if not isinstance(content, list):
                return None
            out = list(messages)
            out[i] = {**m, "content": [*content, {"type": "text", "text": ctx}]}
            return out
    return None


def _append_text(content: Any, ctx: str, text_type: str) -> Any:
    if isinstance(content, str):
        return f"{content}\n\n{ctx}" if content else ctx
    if isinstance(content, list):
        return [*content, {"type": text_type, "text": ctx}]
    return None


def _append_openai(messages: list[Any], ctx: str, text_type: str = "text") -> list[Any] | None:
    last = messages[-1] if messages else None
    if not isinstance(last, dict):
        return None
    role = last.get("role")
    if role in ("tool", "function") or last.get("type") in ("function_call_output", "function_call"):
        return [*messages, {"role": "user", "content": ctx}]
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user":
            content = _append_text(m.get("content"), ctx, text_type)
            if content is None:
                return None
            out = list(messages)
            out[i] = {**m, "content": content}
            return out
    return None


def _masked_head(messages: list[Any], moves: _Moves, text_type: str = "text") -> list[Any]:
    """``messages`` with the values of its leading system and developer messages masked."""
    head = []
    for m in messages:
        if not (isinstance(m, dict) and m.get("role") in ("system", "developer")):
            break
        content = moves.parts(m.get("content"), text_type)
        head.append(m if content is m.get("content") else {**m, "content": content})
    return [*head, *messages[len(head) :]]


def move_volatile(api: str, body: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """``api``: ``"anthropic-messages"``, ``"openai-chat"`` or ``"openai-responses"``.
    Returns the new body (None: nothing moved) and the rewrites applied."""
    moves = _Moves()
    new = dict(body)
    if isinstance(body.get("tools"), list):
        new["tools"] = moves.descriptions(body["tools"])
    if api == "anthropic-messages":
        if "system" in body:
            new["system"], orphan = _anthropic_system(body["system"], moves)
            if new["system"] == []:
                del new["system"]
            if orphan is not None:  # every system block moved: the last tool carries the marker
                tools = new.get("tools")
                if (
                    isinstance(tools, list)
                    and tools
                    and isinstance(tools[-1], dict)
                    and "cache_control" not in tools[-1]
                ):
                    new["tools"] = [*tools[:-1], {**tools[-1], "cache_control": orphan}]
        if not moves.lines or not isinstance(body.get("messages"), list):
            return None, []
        messages = _append_anthropic(body["messages"], _context(moves.lines))
    elif api == "openai-chat":
        messages_in = body.get("messages")
        if not isinstance(messages_in, list):
            return None, []
        head = _masked_head(messages_in, moves)
        if not moves.lines:
            return None, []
        messages = _append_openai(head, _context(moves.lines))
    elif api == "openai-responses":
        if "instructions" in body:
            new["instructions"] = moves.text(body["instructions"])
        items = body.get("input")
        if isinstance(items, list):  # leading system or developer items are the head too
            items = _masked_head(items, moves, "input_text")
        if not moves.lines:
            return None, []
        ctx = _context(moves.lines)
        if isinstance(items, str):
            new["input"] = f"{items}\n\n{ctx}" if items else ctx
            return new, moves.applied
        messages = _append_openai(items, ctx, "input_text") if isinstance(items, list) else None
        if messages is not None:
            new["input"] = messages
            return new, moves.applied
        return None, []
    else:
        return None, []
    if messages is None:
        return None, []  # nowhere to put the values: leave the request as it came
    new["messages"] = messages
    return new, moves.applied
