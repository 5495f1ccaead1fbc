"""Safe fixes only: remove BOMs, CRLF → LF, sort tool/schema keys, sort tools by name.

Each fix keeps the prompt's meaning and only makes its bytes canonical. Prompt files are
edited as text; JSON request files are re-serialised (indent kept) after the change. JSONL
logs are records of what was sent and are never rewritten; neither is source code. :func:`unified_diff` shows a
fix without writing it (``--diff``).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from analyzer.lint.documents import BOM, SourceFile
from analyzer.lint.rules.pg204_unsorted_tools import tool_name
from analyzer.rewrite.tools import (
    sorted_keys as sort_keys,
)  # the same key order the proxy's safe rewrite sends

FIXABLE = {"PG201", "PG202", "PG203", "PG204"}


def _map_strings(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def _fix_body(body: dict[str, Any], codes: set[str]) -> dict[str, Any]:
    if "PG201" in codes:
        body = _map_strings(body, lambda s: s.replace(BOM, ""))
    if "PG202" in codes:
        body = _map_strings(body, lambda s: s.replace("\r\n", "\n"))
    tools = body.get("tools")
    if "PG203" in codes:
        if isinstance(tools, list):
            body["tools"] = tools = [sort_keys(t) for t in tools]
        if isinstance(body.get("response_format"), dict):
            body["response_format"] = sort_keys(body["response_format"])
        if isinstance(body.get("text"), dict) and isinstance(body["text"].get("format"), dict):
            body["text"]["format"] = sort_keys(body["text"]["format"])
    if "PG204" in codes and isinstance(tools, list) and all(tool_name(t) for t in tools):
        body["tools"] = sorted(tools, key=tool_name)
    return body


def _indent(text: str) -> int | None:
    m = re.match(r"\s*[\[{]\r?\n([ \t]+)", text)
    return len(m.group(1).expandtabs(4)) if m else None


def fixed_text(src: SourceFile, codes: set[str]) -> str | None:
    """The file's new text after the fixes for ``codes``, or None when nothing changes."""
    codes = codes & FIXABLE
    original = (BOM if src.has_bom else "") + src.text
    if not codes or src.kind in ("jsonl", "source"):
        return None  # logs are records of what was sent; code is not rewritten
    if src.kind == "text":
        text = src.text.replace(BOM, "") if "PG201" in codes else original
        if "PG202" in codes:
            text = text.replace("\r\n", "\n")
    else:
        try:
            value = json.loads(src.text)
        except json.JSONDecodeError:
            return None
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            inner = next((k for k in ("request", "body") if isinstance(item.get(k), dict)), None)
            if inner:
                item[inner] = _fix_body(item[inner], codes)
            else:
                items[i] = _fix_body(item, codes)
        value = items if isinstance(value, list) else items[0]
        text = json.dumps(value, indent=_indent(src.text), ensure_ascii=False)
        if src.text.endswith("\n"):
            text += "\n"
        if src.has_bom and "PG201" not in codes:
            text = BOM + text
    return None if text == original else text


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
