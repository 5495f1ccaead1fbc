"""PG204 unsorted-tools: a tool list that is not sorted by name."""

from __future__ import annotations

from typing import Any

from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule

RULE = Rule(
    code="PG204",
    name="unsorted-tools",
    summary="Tools not sorted by name",
    message="tools are not sorted by name ({names}); tools come first in the prompt, so a different order forks the cache at token 0",
    why="Tools are rendered before the system prompt. Lists built from sets, dict iteration or plugin discovery change "
    "order between processes, and a reordered tool list shares no cached prefix at all.",
    example="tools: [search, calculator, browse] from one worker and [calculator, search, browse] from another",
    fix="Sort tools by name when building the request; `prefixgate lint --fix` sorts them in request files.",
    severity="low",
    scope="request",
    fixable=True,
    default=False,  # opt-in: a canonical form, not proof of a cache miss (PG302/PG301 see real ones)
)


def tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return ""
    fn = tool.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return fn["name"]
    return tool.get("name") if isinstance(tool.get("name"), str) else ""


def check(doc: Doc):
    req = doc.request
    if req is None:
        return
    tools = req.body.get("tools")
    if not isinstance(tools, list) or len(tools) < 2:
        return
    names = [tool_name(t) for t in tools]
    if all(names) and names != sorted(names):
        line, col = req.position("tools")
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        yield Finding(
            RULE,
            RULE.message.format(names=shown),
            doc.file.path,
            line,
            col,
            field="tools",
            key=",".join(names),
            group="tools",
        )
