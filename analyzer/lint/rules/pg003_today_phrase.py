"""PG003 today-phrase: A 'today is' / 'current date' phrase in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG003",
    name="today-phrase",
    summary="A 'today is' / 'current date' phrase in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix introduces a value that changes per day or per request",
    why="Phrases such as 'Today is …' or 'Current date/time:' are followed by a rendered value that changes, so the prefix stops repeating at that point.",
    example="system: 'Today is Monday, November 30. Answer politely…'",
    fix="Move the phrase and its value to the end of the prompt.",
    severity="medium",
)
KINDS = ("today-phrase",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
