"""PG001 time-in-prefix: Time of day or timestamp in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG001",
    name="time-in-prefix",
    summary="Time of day or timestamp in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix changes every request and forks the cache there",
    why="A clock time or timestamp differs on every request. Providers cache exact prefixes, so every token after it is re-billed at the full input price on every call.",
    example="system: 'Current time: 14:05 UTC. You are a support agent…' (followed by 3,000 tokens of policy)",
    fix="Move the time to the end of the prompt (the last user message), or drop it; round it to the day only if the model needs a date.",
    severity="high",
)
KINDS = ("time",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
