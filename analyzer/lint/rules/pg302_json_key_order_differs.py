"""PG302 json-key-order-differs: across a log, the same tool or schema with another key order."""

from __future__ import annotations

import json

from analyzer.jsonpath import get_path
from analyzer.lint.documents import Request
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._variants import Variants
from analyzer.lint.rules.pg204_unsorted_tools import tool_name

RULE = Rule(
    code="PG302",
    name="json-key-order-differs",
    summary="The same tool or schema JSON with a different key order across requests",
    message="{what} has the same content as at line {first_line} but a different key order ({count} request(s)): its bytes, and every cached prefix after it, differ",
    why="Key order reaches the prompt. Two services (or two code paths) that build the same schema in a different order "
    "send different bytes, and the provider caches them separately.",
    example='line 1: {"name": "search", "parameters": …}; line 2: {"parameters": …, "name": "search"}',
    fix="Serialise tools and schemas with sorted keys everywhere (json.dumps(..., sort_keys=True)).",
    severity="high",
    scope="log",
)


def check(requests: list[Request]):
    variants = Variants()
    for req in requests:
        for seg in req.segments:
            if seg.kind not in ("tool", "schema"):
                continue
            value = get_path(req.body, seg.path)
            raw = json.dumps(value, ensure_ascii=False)
            canon = json.dumps(value, ensure_ascii=False, sort_keys=True)
            name = tool_name(value) if seg.kind == "tool" else seg.path
            group = (req.provider, req.model, seg.kind, name, canon)
            base = variants.new_variant(group, raw, req)
            if base is None:
                continue
            what = f"tool `{name}` ({seg.path})" if seg.kind == "tool" else f"the schema at {seg.path}"
            line, col = req.position(seg.path)
            finding = Finding(
                RULE, "", req.file.path, line, col, field=seg.path, key=f"{name}:{raw[:200]}", group="keys"
            )
            variants.report(group, raw, finding, what=what, first_line=base[1].line)
    yield from variants.findings(RULE)
