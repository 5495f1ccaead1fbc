"""PG006 request-id-in-prefix: Request, session or trace id in a cacheable prefix."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Rule
from analyzer.lint.rules._volatile import volatile_findings

RULE = Rule(
    code="PG006",
    name="request-id-in-prefix",
    summary="Request, session or trace id in a cacheable prefix",
    message="{label} `{value}` in the cacheable prefix is unique per request or session",
    why="Request, session, trace and correlation ids differ on every call; in the prefix they fork the cache for everything after them.",
    example="system: 'request_id: 7f9e2c1a91. You are…'",
    fix="Pass ids in headers or API metadata, not in the prompt; if the model needs one, put it in the last message.",
    severity="high",
)
KINDS = ("request-id",)


def check(doc: Doc):
    return volatile_findings(RULE, KINDS, doc, own_severity=False)
