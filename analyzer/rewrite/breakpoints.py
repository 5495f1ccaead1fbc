"""``safe`` for Anthropic: cache breakpoints in the right places.

``add-breakpoints``: a request with no ``cache_control`` gets up to 3 ephemeral breakpoints
(last tool, last system block, the conversation before the final user turn), each only where
the prefix reaches the model's minimum. ``cap-breakpoints``: more than 4 are cut to 4 (the first
and the latest kept, TTL order preserved).

It does NOT change, reorder or strip prompt content, move an existing breakpoint, touch OpenAI
requests (:mod:`.openai_breakpoints`), raise, do I/O or mutate its input; odd bodies are left
alone. See docs/rewrite.md ("Anthropic breakpoints").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from analyzer.cache_rules import ANTHROPIC_MAX_BREAKPOINTS, anthropic_min_tokens
from analyzer.jsonpath import JsonPath
from analyzer.segments import ANTHROPIC, anthropic_segments
from analyzer.tokens import estimate_tokens

ADD_BREAKPOINTS = "add-breakpoints"
CAP_BREAKPOINTS = "cap-breakpoints"
REWRITES = {
    ADD_BREAKPOINTS: "add cache_control breakpoints after tools, system and the conversation so far",
    CAP_BREAKPOINTS: "drop the oldest middle breakpoints of a request with more than 4",
}
EPHEMERAL = {"type": "ephemeral"}
#: Anthropic refuses cache_control on these
_UNCACHEABLE = ("thinking", "redacted_thinking")


@dataclass(frozen=True, slots=True)
class Placement:
    #: None: nothing changed, forward the original bytes
    body: dict[str, Any] | None
    applied: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Block:
    #: where the block sits in the body (its segment's path); a string field's ends at the field
    path: JsonPath
    #: the block dict, or the string it stands for
    value: Any
    #: canonical prompt bytes up to and including this block
    end: int
    role: str | None = None


def place_breakpoints(provider: str, route: str, body: dict[str, Any], *, model: str | None) -> Placement:
    """The rewrites that apply to ``body`` (never mutated) sent to ``route``."""
    try:
        if provider != ANTHROPIC or not isinstance(route, str) or not route.rstrip("/").endswith("/messages"):
            return Placement(None)
        if not isinstance(body, dict) or (blocks := _blocks(body)) is None:
            return Placement(None)
        markers = _markers(blocks)
        if not markers and "cache_control" not in body:  # any marker, even a null one, is the user's choice
            name = model if isinstance(model, str) else body.get("model")
            return _add_breakpoints(body, blocks, anthropic_min_tokens(name if isinstance(name, str) else ""))
        return _cap_breakpoints(body, blocks, [path for path, value in markers if isinstance(value, dict)])
    except Exception:  # a body shape this module did not foresee: forward it untouched
        return Placement(None)


def _add_breakpoints(body: dict[str, Any], blocks: list[_Block], min_tokens: int) -> Placement:
    users = [b.path[1] for b in blocks if b.path[0] == "messages" and b.role == "user"]
    before = users[-1] - 1 if users else -1  # the message before the final user turn
    candidates = [
        _last(blocks, lambda b: b.path[0] == "tools"),
        _last(blocks, lambda b: b.path[0] == "system" and _cacheable(b.value)),
        _last(blocks, lambda b: b.path[0] == "messages" and b.path[1] == before and _cacheable(b.value)),
    ]
    places = [
        b
        for b in candidates
        if b is not None and _cacheable(b.value) and estimate_tokens(b.end) >= min_tokens
    ]
    if not places:
        return Placement(None)
    for b in places:
        body = _with_marker(body, b.path, EPHEMERAL)
    return Placement(body, [ADD_BREAKPOINTS])


def _cap_breakpoints(body: dict[str, Any], blocks: list[_Block], markers: list[JsonPath]) -> Placement:
    auto = isinstance(body.get("cache_control"), dict) and bool(blocks)
    if auto and markers and markers[-1] == blocks[-1].path:
        auto = False  # the last block already carries the automatic breakpoint's marker
    limit = ANTHROPIC_MAX_BREAKPOINTS - (1 if auto else 0)
    if len(markers) <= limit:
        return Placement(None)
    for path in markers[1 : len(markers) - limit + 1]:
        body = _with_marker(body, path, None)
    return Placement(body, [CAP_BREAKPOINTS])


def _blocks(body: dict[str, Any]) -> list[_Block] | None:
    """Every segment-level block in prompt order; None when the body's shape is unexpected."""
    found: list[tuple[JsonPath, Any, str | None]] = []
    tools, system, messages = body.get("tools"), body.get("system"), body.get("messages")
    if tools is not None:
        if not _dicts(tools):
            return None
        found += [(JsonPath(("tools", i)), t, None) for i, t in enumerate(tools)]
    if isinstance(system, str):
        found.append((JsonPath(("system",)), system, "system"))
    elif system is not None:
        if not _dicts(system):
            return None
        found += [(JsonPath(("system", j)), b, "system") for j, b in enumerate(system)]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None
    for i, msg in enumerate(messages):
        content, role = msg.get("content"), msg.get("role") if isinstance(msg.get("role"), str) else None
        field = JsonPath(("messages", i, "content"))
        if isinstance(content, str):
            found.append((field, content, role))
        elif _dicts(content):
            found += [(field.index(j), b, role) for j, b in enumerate(content)]
        else:
            return None
    segments = anthropic_segments(body)
    if len(segments) != len(found):
        return None
    ends = accumulate(len(s.data) for s in segments)
    return [_Block(path, value, end, role) for (path, value, role), end in zip(found, ends)]


def _markers(blocks: list[_Block]) -> list[tuple[JsonPath, Any]]:
    """(path, cache_control) of the blocks, and blocks nested in a tool_result, that carry one, in prompt order."""
    out: list[tuple[JsonPath, Any]] = []
    for b in blocks:
        if not isinstance(b.value, dict):
            continue
        nested = b.value.get("content") if b.value.get("type") == "tool_result" else None
        if isinstance(nested, list):
            marked = [(k, n) for k, n in enumerate(nested) if isinstance(n, dict) and "cache_control" in n]
            out += [(b.path.key("content").index(k), n["cache_control"]) for k, n in marked]
        if "cache_control" in b.value:
            out.append((b.path, b.value["cache_control"]))
    return out


def _with_marker(body: dict[str, Any], path: JsonPath, marker: dict[str, str] | None) -> dict[str, Any]:
    """A copy of ``body`` with ``cache_control`` set (or removed, for None) at ``path``; copies only that path."""

    def marked(node: Any) -> Any:
        if isinstance(node, str):  # string system/content → one text block carrying the marker
            return [{"type": "text", "text": node, "cache_control": dict(marker or EPHEMERAL)}]
        block = {k: v for k, v in node.items() if k != "cache_control"}
        if marker is not None:
            block["cache_control"] = dict(marker)
        return block

    return path.updated(body, marked)


def _cacheable(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value)
    if not isinstance(value, dict) or value.get("type") in _UNCACHEABLE:
        return False
    return value.get("type") != "text" or (isinstance(value.get("text"), str) and bool(value["text"]))


def _last(blocks: list[_Block], keep: Any) -> _Block | None:
    return next((b for b in reversed(blocks) if keep(b)), None)


def _dicts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)
