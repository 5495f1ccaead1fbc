"""Anthropic Messages bodies → segments in the cache's order: tools, system, messages.

Each tool, system block and message content block is one segment; a ``cache_control`` marker is
dropped from the bytes (moving a marker changes no prefix) and recorded as the breakpoint that
ends its segment (``5m`` or ``1h``), also when it sits on a block nested in a ``tool_result``.

It never raises on odd bodies: fields of the wrong type are skipped or kept whole.
"""

from __future__ import annotations

from typing import Any

from analyzer.jsonpath import index_path, key_path
from analyzer.segmenters.canonical import Segment, make_segment, text_blocks


def strip_cache_control(value: Any) -> Any:
    """Drop ``cache_control`` from a block and from the blocks nested in its ``content``
    (a ``tool_result`` may carry markers on its inner text blocks)."""
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if k != "cache_control"}
    inner = out.get("content")
    if isinstance(inner, list) and any(isinstance(b, dict) and "cache_control" in b for b in inner):
        out["content"] = [strip_cache_control(b) for b in inner]
    return out


def breakpoint_ttl(block: Any) -> str | None:
    """The breakpoint a block carries: its own marker, else one on a nested content block."""
    if not isinstance(block, dict):
        return None
    cc = block.get("cache_control")
    if not isinstance(cc, dict):
        inner = block.get("content")
        if isinstance(inner, list):
            marks = [breakpoint_ttl(b) for b in inner if isinstance(b, dict) and "content" not in b]
            return next((m for m in reversed(marks) if m), None)
        return None
    return "1h" if cc.get("ttl") == "1h" else "5m"


def _block_segment(kind: str, path: str, block: Any, *, tag: str = "", role: str | None = None) -> Segment:
    return make_segment(
        kind, path, strip_cache_control(block), tag=tag, cache_control=breakpoint_ttl(block), role=role
    )


def anthropic_segments(body: dict[str, Any]) -> list[Segment]:
    out: list[Segment] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(_block_segment("tool", index_path("tools", i), tool))
    system = body.get("system")
    if system is not None:
        for j, block in enumerate(text_blocks(system)):
            path = "system" if isinstance(system, str) else index_path("system", j)
            out.append(_block_segment("system", path, block, role="system"))
    messages = body.get("messages")
    if isinstance(messages, list):
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                out.append(make_segment("message", index_path("messages", i), msg))
                continue
            role = msg.get("role") if isinstance(msg.get("role"), str) else "?"
            content = msg.get("content")
            field = key_path(index_path("messages", i), "content")
            for j, block in enumerate(text_blocks(content)):
                path = field if isinstance(content, str) else index_path(field, j)
                # the block index in the tag keeps message boundaries in the hash
                out.append(_block_segment("message", path, block, tag=f"{role}:{j}", role=role))
    return out
