"""PG102 too-many-breakpoints: more than 4 ``cache_control`` breakpoints in one Anthropic request.

Not for OpenAI's GPT-5.6 ``prompt_cache_breakpoint`` markers: there more than 4 is no error
(the latest 4 are written; PG105 covers a head left unmarked)."""

from __future__ import annotations

from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.cache_rules import ANTHROPIC_MAX_BREAKPOINTS

RULE = Rule(
    code="PG102",
    name="too-many-breakpoints",
    summary="More than 4 cache_control breakpoints in one request",
    message="{count} cache_control breakpoints; Anthropic allows {limit} per request and rejects this one (the extra one is at {field})",
    why="The Messages API accepts at most 4 cache_control markers across tools, system and messages; a fifth is a 400 error, "
        "so the request fails instead of caching.",
    example="cache_control on every one of 6 system blocks",
    fix="Keep breakpoints only at the ends of stable regions: after the tools, after the system prompt, and on the last "
        "1–2 messages of a conversation. Earlier prefixes are matched automatically from a later breakpoint.",
    severity="high",
    scope="request",
)


def check(doc: Doc):
    req = doc.request
    if req is None or req.provider != "anthropic":
        return
    marks = [s for s in req.segments if s.cache_control]
    if len(marks) > ANTHROPIC_MAX_BREAKPOINTS:
        extra = marks[ANTHROPIC_MAX_BREAKPOINTS]
        field = f"{extra.path}.cache_control"
        line, col = req.position(field)
        msg = RULE.message.format(count=len(marks), limit=ANTHROPIC_MAX_BREAKPOINTS, field=field)
        yield Finding(RULE, msg, doc.file.path, line, col, field=field, key=str(len(marks)), group="count")
