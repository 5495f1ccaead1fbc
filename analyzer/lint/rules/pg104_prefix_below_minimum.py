"""PG104 prefix-below-minimum: a cacheable prefix shorter than the provider caches."""

from __future__ import annotations

from analyzer.cache_rules import OPENAI_RULES, anthropic_min_tokens
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.tokens import estimate_tokens

#: automatic caching: report near misses, from three quarters of the minimum up
NEAR = 0.75

RULE = Rule(
    code="PG104",
    name="prefix-below-minimum",
    summary="Cacheable prefix below the provider's minimum",
    message="{what} is ≈{tokens:,} tokens, {short:,} short of {provider}'s {minimum:,}-token minimum{model}: nothing is cached",
    why="Providers only cache prefixes from a minimum length: OpenAI 1,024 tokens (then in 128-token steps), Anthropic "
    "per model: 4,096 for Opus 4.5–4.7 and Haiku 4.5, 2,048 for Haiku 3.x, 512 for Opus 5, Fable 5 and Mythos 5, "
    "1,024 for the others (Sonnet, Opus 4.8 and older Opus). A prefix one token short is billed in full on every "
    "request, and an Anthropic breakpoint on it is silently ignored.",
    example="a 900-token system prompt sent to gpt-4o on every request",
    fix="Grow the stable prefix past the minimum (move stable examples or reference text into it) or accept no caching; "
    "token counts here are estimates (4 bytes per token).",
    severity="medium",
    scope="request",
)


def check(doc: Doc):
    req = doc.request
    if doc.file.kind == "source":
        return  # a source file's length says nothing about one prompt's
    if req is None:
        tokens = estimate_tokens(doc.prefix_bytes())
        minimum = OPENAI_RULES.min_tokens
        if NEAR * minimum <= tokens < minimum:
            msg = RULE.message.format(
                what="this prompt",
                tokens=tokens,
                short=minimum - tokens,
                provider="OpenAI",
                minimum=minimum,
                model="",
            )
            yield Finding(
                RULE, msg, doc.file.path, 1, 1, key=f"text:{minimum}", group="prefix", severity="low"
            )
        return
    if req.provider == "anthropic":
        minimum = anthropic_min_tokens(req.model)
        total = 0
        for seg in req.segments:
            total += len(seg.data)
            if seg.cache_control and estimate_tokens(total) < minimum:
                tokens = estimate_tokens(total)
                field = f"{seg.path}.cache_control"
                line, col = req.position(field)
                msg = RULE.message.format(
                    what=f"the prefix cached at {field}",
                    tokens=tokens,
                    short=minimum - tokens,
                    provider="Anthropic",
                    minimum=minimum,
                    model=f" for {req.model}" if req.model else "",
                )
                yield Finding(
                    RULE, msg, doc.file.path, line, col, field=field, key=f"{field}:{minimum}", group="prefix"
                )
        return
    tokens = estimate_tokens(doc.prefix_bytes())
    minimum = OPENAI_RULES.min_tokens
    if NEAR * minimum <= tokens < minimum:
        last = req.segments[req.boundary - 1].path if req.boundary else ""
        line, col = req.position(last)
        msg = RULE.message.format(
            what="the stable prefix (everything before the last message)",
            tokens=tokens,
            short=minimum - tokens,
            provider="OpenAI",
            minimum=minimum,
            model="",
        )
        yield Finding(
            RULE, msg, doc.file.path, line, col, field=last or None, key=f"openai:{minimum}", group="prefix"
        )
