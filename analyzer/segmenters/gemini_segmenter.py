"""Gemini bodies → segments in the cache's order: ``cachedContent``, system, tools, contents.

Each system and content part is one segment, tagged with its role and index; camelCase and
snake_case spellings of a field are one (camelCase wins when both are present), and a bare
string or a single ``Content`` is read as the list it stands for.

It never raises on odd bodies: fields of the wrong type are skipped or kept whole.
"""

from __future__ import annotations

from typing import Any

from analyzer.jsonpath import index_path, key_path
from analyzer.segmenters.canonical import Segment, make_segment


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
        out.append(make_segment("cached", key, cached))
    key, system = _field(body, "systemInstruction", "system_instruction")
    if system is not None:
        inner, parts = _parts(system)
        field = key_path(key, inner) if inner else key
        for j, part in enumerate(parts):
            path = field if isinstance(system, str) else index_path(field, j)
            out.append(make_segment("system", path, part, role="system"))
    tools = body.get("tools")
    if isinstance(tools, list):
        for i, tool in enumerate(tools):
            out.append(make_segment("tool", index_path("tools", i), tool))
    contents = body.get("contents")
    single = isinstance(contents, (str, dict))
    if single:
        contents = [contents]
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
                out.append(make_segment("message", where, content, tag=f"{role}:0", role=role))
                continue
            field = key_path(where, inner) if inner else where
            for j, part in enumerate(parts):
                path = field if isinstance(content, str) else index_path(field, j)
                out.append(make_segment("message", path, part, tag=f"{role}:{j}", role=role))
    return out
