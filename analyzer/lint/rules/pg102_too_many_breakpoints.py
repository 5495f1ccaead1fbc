"""PG102 too-many-breakpoints: more than 4 ``cache_control`` breakpoints in one Anthropic request.

A top-level ``cache_control`` (automatic caching) puts one more on the last block unless that
block is marked already, and counts toward the 4 as the API counts it (so does the emulator,
:func:`proxy.emulator.anthropic_cache.breakpoints`).

Not for OpenAI's GPT-5.6 ``prompt_cache_breakpoint`` markers: there more than 4 is no error
(the latest 4 are written; PG105 covers a head left unmarked)."""

from __future__ import annotations

from analyzer.cache_rules import ANTHROPIC_MAX_BREAKPOINTS
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule

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
    segs = req.segments
    fields = [f"{s.path}.cache_control" for s in segs if s.cache_control]
    if isinstance(req.body.get("cache_control"), dict) and segs and not segs[-1].cache_control:
        fields.append("cache_control")  # automatic caching: one more breakpoint, on the last block
    if len(fields) > ANTHROPIC_MAX_BREAKPOINTS:
        field = fields[ANTHROPIC_MAX_BREAKPOINTS]
        line, col = req.position(field)
        msg = RULE.message.format(count=len(fields), limit=ANTHROPIC_MAX_BREAKPOINTS, field=field)
        yield Finding(RULE, msg, doc.file.path, line, col, field=field, key=str(len(fields)), group="count")
