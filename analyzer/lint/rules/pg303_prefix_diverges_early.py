"""PG303 prefix-diverges-early: consecutive requests of a session fork before the new turn."""

from __future__ import annotations

from analyzer.divergence import CAUSES, MIN_SIMILARITY, shared_segments, text_fork
from analyzer.lint.documents import Request
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._volatile import short

RULE = Rule(
    code="PG303",
    name="prefix-diverges-early",
    summary="Consecutive requests of a session diverge early",
    message="{cause} at {field} offset {offset:,} forks {count} of {pairs} consecutive request pair(s){session}; everything after it is re-billed",
    why="In a conversation each request should extend the previous one, so the whole history is a cache hit. When an early "
    "part changes between turns (a timestamp in the system prompt, a rewritten summary, reordered tools), every turn "
    "pays full price for the whole prompt.",
    example="turn 1 system: 'Now: 14:05'; turn 2 system: 'Now: 14:06'",
    fix="Keep everything before the newest turn byte-identical between turns; move changing values into the newest message.",
    severity="high",
    scope="log",
)


def _head(req: Request) -> int:
    """Leading segments that should be the same for every request: tools, schemas, system/developer text."""
    return next((i for i, s in enumerate(req.segments) if not s.in_head), len(req.segments))


def check(requests: list[Request]):
    last: dict[tuple, Request] = {}
    groups: dict[tuple, list] = {}
    pairs = 0
    for req in requests:
        session = req.session
        key = (req.provider, req.model, session)
        prev = last.get(key)
        last[key] = req
        if prev is None:
            continue
        pairs += 1
        shared = shared_segments(prev.segments, req.segments)
        limit = len(prev.segments) if session is not None else min(_head(prev), _head(req))
        if shared >= limit:
            continue
        fork = text_fork(prev.body, prev.segments, req.body, req.segments, shared)
        if fork is None:
            continue
        if (
            session is None and fork.similarity < MIN_SIMILARITY
        ):  # without a session id: forks inside one template only
            continue
        cause = (
            f"the {CAUSES[fork.kind]} `{short(fork.volatile.value, 32)}`"
            if fork.volatile
            else CAUSES["content"]
        )
        gkey = (fork.field, fork.kind)
        if gkey in groups:
            groups[gkey][1] += 1
            continue
        line, col = req.position(fork.field, fork.at if fork.text else None)
        finding = Finding(
            RULE, "", req.file.path, line, col, field=fork.field, key=f"{gkey[0]}:{gkey[1]}", group=gkey[1]
        )
        groups[gkey] = [finding, 1, cause, fork.at, session]
    for finding, count, cause, offset, session in groups.values():
        sess = " of one session" if session is not None else ""
        finding.message = RULE.message.format(
            cause=cause, field=finding.field, offset=offset, count=count, pairs=pairs, session=sess
        )
        yield finding
