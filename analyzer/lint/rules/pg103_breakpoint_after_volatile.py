"""PG103 breakpoint-after-volatile: a breakpoint whose prefix holds a changing value.

Anthropic's ``cache_control`` and OpenAI GPT-5.6's ``prompt_cache_breakpoint`` alike: both
bill the write (1.25× input) of an entry that is never read again."""

from __future__ import annotations

from analyzer.cache_rules.openai import BREAKPOINT_KEY
from analyzer.jsonpath import get_path, index_path, key_path
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._volatile import LABELS, short

RULE = Rule(
    code="PG103",
    name="breakpoint-after-volatile",
    summary="A cache_control breakpoint placed after volatile content",
    message="cache_control at {field} caches a prefix containing {label} `{value}` at {vfield}: each request writes a new entry (at the cache-write price) that is never read",
    why="A breakpoint asks the provider to write the prefix up to it into the cache, which costs more than plain input "
    "(1.25× for 5 minutes, 2× for 1 hour on Anthropic). If that prefix contains a value that changes, the entry is never "
    "hit again: you pay the write premium on every request and save nothing.",
    example="system: [{text: 'Now: 2026-11-30T14:05Z …', cache_control: {type: ephemeral}}]",
    fix="Move the volatile value after the last breakpoint (into the final user message), or move the breakpoint before it.",
    severity="high",
    scope="request",
)


def _marker_field(body: dict, path: str) -> str:
    """The last ``prompt_cache_breakpoint`` of the OpenAI message or input item at ``path`` (a
    content part's, or a ``function_call_output``'s output part's); ``path.content`` if none is found."""
    item = get_path(body, path)
    found = f"{path}.content"
    for key in ("content", "output"):
        parts = item.get(key) if isinstance(item, dict) else None
        for j, part in enumerate(parts if isinstance(parts, list) else ()):
            if isinstance(part, dict) and BREAKPOINT_KEY in part:
                found = key_path(index_path(key_path(path, key), j), BREAKPOINT_KEY)
    return found


def check(doc: Doc):
    req = doc.request
    if req is None:
        return
    for b, seg in enumerate(req.segments):
        if not seg.cache_control:
            continue
        hit = next(
            (
                (u, v)
                for u, vols in zip(doc.units, doc.vols)
                if u.segment is not None and u.segment <= b
                for v in vols
                if v.severity != "low"
            ),
            None,
        )
        if hit is None:
            continue
        unit, v = hit
        field = (
            f"{seg.path}.cache_control" if req.provider == "anthropic" else _marker_field(req.body, seg.path)
        )
        line, col = req.position(field)
        msg = RULE.message.format(field=field, label=LABELS[v.kind], value=short(v.value), vfield=unit.field)
        yield Finding(
            RULE, msg, doc.file.path, line, col, field=field, key=f"{v.kind}:{unit.field}", group=v.kind
        )
