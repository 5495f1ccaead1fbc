"""PG004 volatile-placeholder: Template placeholder for a volatile value in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG004",
    name="volatile-placeholder",
    summary="Template placeholder for a volatile value in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix is rendered per request (a clock, date or id)",
    why="A placeholder named like now, date, time, timestamp, uuid or request_id renders a different value into the prompt each time, so nothing after it can be cached.",
    example="prompt template: 'It is {{now}}. You are a helpful assistant…'",
    fix="Render the placeholder in the final user message instead, or remove it.",
    severity="high",
)
KINDS = ("placeholder",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=True)
