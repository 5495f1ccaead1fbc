"""PG005 uuid-in-prefix: UUID in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG005",
    name="uuid-in-prefix",
    summary="UUID in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix is usually generated per request or per session",
    why="A UUID is almost always a per-request or per-session identifier; rendered into the prefix it makes every prompt unique from that point on.",
    example="system: 'conversation 550e8400-e29b-41d4-a716-446655440000. You are…'",
    fix="Send identifiers as API metadata (user, metadata, prompt_cache_key) or at the end of the prompt.",
    severity="high",
)
KINDS = ("uuid",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
