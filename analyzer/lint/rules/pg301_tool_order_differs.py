"""PG301 tool-order-differs: across a log, the same tools sent in different orders."""

from __future__ import annotations

from analyzer.divergence import common_prefix_len
from analyzer.lint.documents import Request
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._variants import Variants
from analyzer.lint.rules.pg204_unsorted_tools import tool_name

RULE = Rule(
    code="PG301",
    name="tool-order-differs",
    summary="The same tools in a different order across requests",
    message="tools arrive in a different order than at line {first_line} ({order} vs {first_order}) in {count} request(s); the prefix forks at tools[{at}]",
    why="Tools open the prompt. The same set in another order is different bytes from the first token on, so those "
    "requests never share a cached prefix with the others.",
    example="line 1: [search, browse]; line 2: [browse, search]",
    fix="Sort tools by name (or keep one fixed order) wherever requests are built.",
    severity="high",
    scope="log",
)


def check(requests: list[Request]):
    variants = Variants()
    for req in requests:
        tools = req.body.get("tools")
        if not isinstance(tools, list) or len(tools) < 2:
            continue
        names = tuple(tool_name(t) for t in tools)
        group = (
            req.provider,
            req.model,
            tuple(sorted(names)),
        )  # the same tools (duplicates counted), in any order
        base = variants.new_variant(group, names, req)
        if base is None:
            continue
        base_names, base_req = base
        at = common_prefix_len(names, base_names)
        line, col = req.position("tools")
        finding = Finding(
            RULE, "", req.file.path, line, col, field="tools", key=",".join(names), group="order"
        )
        variants.report(
            group,
            names,
            finding,
            first_line=base_req.line,
            order=", ".join(names[:4]),
            first_order=", ".join(base_names[:4]),
            at=at,
        )
    yield from variants.findings(RULE)
