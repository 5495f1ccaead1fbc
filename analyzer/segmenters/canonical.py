"""A segment of a request body and its canonical bytes: :class:`Segment`, :func:`make_segment`.

A segment's bytes are a kind/role tag, then compact JSON (:func:`dumps`, which never raises):
what is hashed, so two spellings that render the same must give the same bytes.
:func:`text_blocks` is the one spelling of a string-or-blocks ``content`` field.

It cuts no body (the provider segmenters do) and hashes nothing (:mod:`analyzer.prefix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

HEAD_KINDS = frozenset({"cached", "tool", "schema", "system", "instructions"})
#: ends a segment's kind/role tag in its bytes
TAG_END = b"\x1f"


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
        _, sep, rest = self.data.partition(TAG_END)
        return rest if sep else self.data

    @property
    def in_head(self) -> bool:
        """Part of the request's stable head (tools, schemas, system/developer text), not the conversation."""
        return self.kind in HEAD_KINDS or self.role in ("system", "developer")


def dumps(value: Any) -> bytes:
    """Compact JSON; a value orjson refuses (a number out of range and the like) falls back to
    its repr, never raising."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return repr(value).encode("utf-8", "replace")


def make_segment(
    kind: str,
    path: str,
    value: Any,
    *,
    tag: str = "",
    cache_control: str | None = None,
    role: str | None = None,
) -> Segment:
    """The segment of ``value`` at ``path``: ``kind:tag`` then its canonical JSON."""
    head = f"{kind}:{tag}".encode() + TAG_END
    return Segment(kind, path, head + dumps(value), cache_control, role)


def text_blocks(content: Any, text_type: str = "text") -> list[Any]:
    """Normalise a string-or-blocks content field into a list of blocks (a string is one
    ``text_type`` block: ``text``, or Responses' ``input_text`` / ``output_text``)."""
    if isinstance(content, str):
        return [{"type": text_type, "text": content}]
    if isinstance(content, list):
        return content
    if content is None:
        return []
    return [content]
