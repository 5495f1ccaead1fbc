"""PG105 no-breakpoint-at-stable-head: a GPT-5.6+ request whose long stable head carries no breakpoint.

Its only breakpoint then sits on the changing newest message, so every request writes the head
again at 1.25× and reads none of it (the codex pattern). Flagged from 1,024 tokens, for 5.6+
models only; the head ends at its last system/developer message or ``instructions``. JSONL logs
are read request by request, repeats collapsed.

It does NOT flag a head of tools alone (no part to mark), a head with a marker in it, or an
explicit-mode request whose markers after the head cover it. See docs/lint.md.
"""

from __future__ import annotations

from analyzer.cache_rules import OPENAI_56_RULES
from analyzer.cache_rules.openai import BREAKPOINT_KEY, OPTIONS_KEY, uses_breakpoints
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.missed import BREAKPOINT_KINDS
from analyzer.tokens import estimate_tokens

RULE = Rule(
    code="PG105",
    name="no-breakpoint-at-stable-head",
    summary="GPT-5.6+ request whose long stable head carries no prompt_cache_breakpoint",
    message="the stable head ({what}) is ≈{tokens:,} tokens and ends at {field} with no "
    "prompt_cache_breakpoint: {model} caches only at breakpoints, and the implicit one sits on the newest message, "
    "so every request writes the head again at 1.25× input and reads none of it",
    why="From GPT-5.6 on, OpenAI writes cache entries only at breakpoints: one implicit breakpoint at the end of the newest "
    "message and the content parts marked prompt_cache_breakpoint, and a later request reads an entry only on an exact "
    "match at a breakpoint (no fallback to a shorter prefix). A long developer prompt followed by a new user message "
    "per request therefore never hits: the only breakpoint is on the part that changes, and each write bills 1.25× input.",
    example="a 9,000-token developer message and one new user message per request, sent to gpt-5.6-terra with no marker",
    fix='Mark the last content part of the stable head: {"type": "text", "text": "…", "prompt_cache_breakpoint": '
    '{"mode": "explicit"}} (Responses: move `instructions` into a developer input item and mark that). '
    "`prefixgate serve --rewrite safe` can add it on the way.",
    severity="high",
    scope="request",
)


_PARTS = {"tool": "tools", "schema": "output schema", "instructions": "instructions"}


def _explicit(body: dict) -> bool:
    options = body.get(OPTIONS_KEY)
    return isinstance(options, dict) and options.get("mode") == "explicit"


def check(doc: Doc):
    req = doc.request
    if req is None or req.provider != "openai" or not uses_breakpoints(req.model):
        return
    segs = req.segments
    run = 0
    while run < len(segs) and segs[run].in_head:
        run += 1
    # the head ends at its last message or instructions, where a marker can sit (tools and schemas
    # take none: a head of them alone has no part to mark, as analyzer.missed and analyzer.diagnose count it)
    head = max((i + 1 for i in range(run) if segs[i].kind in BREAKPOINT_KINDS), default=0)
    tokens = estimate_tokens(sum(len(s.data) for s in segs[:head]))
    if head == 0 or tokens < OPENAI_56_RULES.min_tokens:
        return
    if any(s.cache_control is not None for s in segs[:head]):
        return
    if _explicit(req.body) and any(s.cache_control is not None for s in segs[head:]):
        return  # the app places its breakpoints itself, past the head
    last = segs[head - 1].path
    line, col = req.position(last)
    what = ", ".join(dict.fromkeys(_PARTS.get(s.kind, "system/developer messages") for s in segs[:head]))
    msg = RULE.message.format(what=what, tokens=tokens, field=last, model=req.model)
    yield Finding(
        RULE, msg, doc.file.path, line, col, field=last, key=f"{last}:{BREAKPOINT_KEY}", group="head"
    )
