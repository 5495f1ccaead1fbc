"""PG002 date-in-prefix: Date in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG002",
    name="date-in-prefix",
    summary="Date in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix changes at midnight and forks the cache there",
    why="A rendered date is the same all day but changes at midnight (per time zone): every cache entry after it is lost once a day, and a per-user time zone forks it per user.",
    example="system: 'Today: 2026-11-30. You are…'",
    fix="Put the date in the last message, after the cached prefix.",
    severity="low",
)
KINDS = ("date",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
