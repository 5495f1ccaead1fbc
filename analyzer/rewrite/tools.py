"""``safe`` rewrites of tool lists: tools sorted by name, keys inside each tool sorted.

Tools come first in cache order, so a list built in a different order per call forks every
request at the first byte; tool and key order mean nothing to the model, so both are sorted
(lists inside a schema keep their order).

It does NOT act when a ``cache_control`` sits inside the tools (moving tools would move it),
nor look at messages or the system prompt. See docs/rewrite.md ("Tools sorted").
"""

from __future__ import annotations

from typing import Any

SORT_TOOLS = "sort-tools"
SORT_TOOL_KEYS = "sort-tool-keys"


def tool_name(tool: Any) -> str | None:
    """The name of a tool in any provider's shape (Anthropic, Chat Completions, Responses)."""
    if not isinstance(tool, dict):
        return None
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return name if isinstance(name, str) else None


def _has_marker(value: Any) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(_has_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_marker(v) for v in value)
    return False


def sorted_keys(value: Any) -> Any:
    """``value`` with every object's keys in sorted order, recursively (lists keep theirs)."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def sort_tools(tools: Any) -> tuple[list[Any] | None, list[str]]:
    """The tool list sorted (None when nothing changed) and the rewrites applied."""
    if not isinstance(tools, list) or not tools or _has_marker(tools):
        return None, []
    applied = []
    out = list(tools)
    names = [tool_name(t) for t in out]
    if all(names) and len(set(names)) == len(names):  # duplicates or nameless tools: order left alone
        by_name = sorted(out, key=tool_name)  # type: ignore[arg-type]
        if [tool_name(t) for t in by_name] != names:
            out = by_name
            applied.append(SORT_TOOLS)
    keyed = [sorted_keys(t) for t in out]
    if any(list(_walk_keys(a)) != list(_walk_keys(b)) for a, b in zip(keyed, out)):
        out = keyed
        applied.append(SORT_TOOL_KEYS)
    return (out if applied else None), applied


def _walk_keys(value: Any):
    """Every key in document order (to tell whether sorting changed anything)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _walk_keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk_keys(v)
