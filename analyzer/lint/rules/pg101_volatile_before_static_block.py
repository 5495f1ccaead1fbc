"""PG101 volatile-before-static-block: a changing value placed before a large static block."""

from __future__ import annotations

from analyzer.cache_rules import OPENAI_MIN_TOKENS
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._volatile import LABELS, short, where
from analyzer.tokens import estimate_tokens

#: "large": OpenAI's minimum cacheable prefix, Anthropic's default one
STATIC_TOKENS = OPENAI_MIN_TOKENS

RULE = Rule(
    code="PG101",
    name="volatile-before-static-block",
    summary="Volatile content placed before a large static block",
    message="{label} `{value}` comes before ≈{tokens:,} tokens of static content, which cannot be cached while it changes; move it after them",
    why="Prompt caches hold exact prefixes. One changing value early in the prompt makes everything after it a cache miss, "
    "even when those thousands of tokens never change. This is the single most expensive prompt-caching mistake.",
    example="system: 'Current time: {{now}}' followed by a 6,000-token product catalog",
    fix="Order the prompt from most stable to least stable: tools, instructions, catalogs and examples first; dates, "
    "user data and the question last.",
    severity="high",
)


def check(doc: Doc):
    for i, (unit, vols) in enumerate(zip(doc.units, doc.vols)):
        if not unit.cacheable:
            continue
        for v in vols:
            if v.severity == "low":
                continue
            tokens = estimate_tokens(doc.static_after(i, v.end))
            if tokens >= STATIC_TOKENS:
                line, col = unit.position(v.start)
                end_line, end_col = unit.end(v.end)
                msg = RULE.message.format(
                    label=LABELS[v.kind], value=short(v.value), where=where(unit.field), tokens=tokens
                )
                yield Finding(
                    RULE,
                    msg,
                    doc.file.path,
                    line,
                    col,
                    end_line,
                    end_col,
                    field=unit.field,
                    key=f"{v.kind}:{v.value}",
                    group=v.kind,
                )
                return  # the first one is the one to move
