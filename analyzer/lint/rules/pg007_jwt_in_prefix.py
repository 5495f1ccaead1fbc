"""PG007 jwt-in-prefix: JWT in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG007",
    name="jwt-in-prefix",
    summary="JWT in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix is a per-session credential",
    why="A JSON Web Token is per session (and expires): in the prompt it forks the cache and leaks a credential to the model provider.",
    example="system: 'auth: eyJhbGciOi…'",
    fix="Never put tokens in prompts; authenticate tool calls outside the model.",
    severity="high",
)
KINDS = ("jwt",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
