"""PG201 byte-order-mark: a UTF-8 BOM (U+FEFF) at the start of a file or inside the text."""

from __future__ import annotations

import re

from analyzer.lint.documents import SourceFile
from analyzer.lint.model import Finding, Rule

RULE = Rule(
    code="PG201",
    name="byte-order-mark",
    summary="Byte-order mark (U+FEFF) in a prompt",
    message="{what}: an invisible U+FEFF that some loaders keep and others strip, so the same prompt gets two byte forms",
    why="Editors on Windows save UTF-8 with a BOM. Whether the U+FEFF reaches the model depends on how each service "
    "reads the file, so one prompt renders two ways and the two never share a cache entry.",
    example="system_prompt.md saved as 'UTF-8 with BOM'",
    fix="Save the file as UTF-8 without BOM (`prefixgate lint --fix` removes it).",
    severity="medium",
    scope="file",
    fixable=True,
)
_ESCAPED = re.compile(r"\\u[fF][eE][fF][fF]")


def check(src: SourceFile):
    if src.has_bom:
        yield Finding(
            RULE,
            RULE.message.format(what="the file starts with a byte-order mark"),
            src.path,
            1,
            1,
            key="start",
            group="bom",
        )
    for m in re.finditer("\ufeff", src.text):
        line, col = src.line_col(m.start())
        yield Finding(
            RULE,
            RULE.message.format(what="a byte-order mark inside the text"),
            src.path,
            line,
            col,
            key=f"inside:{line}",
            group="bom",
        )
    if src.kind != "text":
        for m in _ESCAPED.finditer(src.text):
            line, col = src.line_col(m.start())
            yield Finding(
                RULE,
                RULE.message.format(what="an escaped byte-order mark (\\ufeff) in a string"),
                src.path,
                line,
                col,
                key=f"escaped:{line}",
                group="bom",
            )
