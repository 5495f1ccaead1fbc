"""PG008 random-id-in-prefix: Long random hex or base64 id in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG008",
    name="random-id-in-prefix",
    summary="Long random hex or base64 id in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix looks generated per request (high entropy)",
    why="A long high-entropy string (nonce, key, hash of per-request data) is unlikely to repeat between requests, so the cached prefix ends before it.",
    example="system: 'nonce 9f86d081884c7d659a2feaa0c55ad015. You are…'",
    fix="Remove the value or move it to the last message; static digests are fine when labelled (commit, sha256, checksum).",
    severity="high",
)
KINDS = ("hex-id", "base64-id")


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
