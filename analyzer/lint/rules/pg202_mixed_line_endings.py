"""PG202 mixed-line-endings: CRLF and LF line endings mixed in one prompt."""

from __future__ import annotations

import re

from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule

RULE = Rule(
    code="PG202",
    name="mixed-line-endings",
    summary="Mixed CRLF and LF line endings in a prompt",
    message="mixed line endings{where}: {crlf} CRLF and {lf} LF; the first {odd} is here, and an editor or git setting can flip them",
    why="A prompt assembled from files with different line endings (or checked out with core.autocrlf) changes bytes "
    "when the file moves between machines, and \\r\\n and \\n are different tokens: the cached prefix no longer matches.",
    example="a template edited on Windows and on Linux, half CRLF and half LF",
    fix="Normalise to LF (`prefixgate lint --fix` converts CRLF to LF) and add `*.md text eol=lf` to .gitattributes.",
    severity="medium",
    fixable=True,
)
_LONE_LF = re.compile(r"(?<!\r)\n")


def check(doc: Doc):
    for unit in doc.units:
        text = unit.text
        crlf = text.count("\r\n")
        if not crlf:
            continue
        lone = [m.start() for m in _LONE_LF.finditer(text)]
        if not lone:
            continue
        odd_is_lf = len(lone) <= crlf
        at = lone[0] if odd_is_lf else text.index("\r\n")
        line, col = unit.position(at)
        msg = RULE.message.format(
            where=f" at {unit.field}" if unit.field else "",
            crlf=crlf,
            lf=len(lone),
            odd="LF" if odd_is_lf else "CRLF",
        )
        yield Finding(RULE, msg, doc.file.path, line, col, field=unit.field, key="mixed", group="eol")
