"""PG203 unsorted-json-keys: tool or schema JSON whose object keys are not in sorted order."""

from __future__ import annotations

from typing import Any

from analyzer.jsonpath import get_path, index_path, key_path
from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule

RULE = Rule(
    code="PG203",
    name="unsorted-json-keys",
    summary="Tool or schema JSON with unsorted object keys",
    message="keys of {field} are not sorted ({keys}); key order reaches the prompt, so code that builds this object another way forks the cache",
    why="Tool definitions and structured-output schemas are rendered into the prompt with their key order. Two code paths "
    "(or a dict built in a different order) produce the same schema with different bytes; sorted keys are one canonical form.",
    example='{"type": "object", "required": ["q"], "properties": {...}} in one service and properties-first in another',
    fix="Serialise schemas with sorted keys (json.dumps(..., sort_keys=True)); `prefixgate lint --fix` sorts them in request files.",
    severity="low",
    scope="request",
    fixable=True,
    default=False,  # opt-in: a canonical form, not proof of a cache miss (PG302/PG301 see real ones)
)


def first_unsorted(value: Any, path: str) -> tuple[str, list[str]] | None:
    if isinstance(value, dict):
        keys = [k for k in value if k != "cache_control"]
        if keys != sorted(keys):
            return path, keys
        for k in keys:
            found = first_unsorted(value[k], key_path(path, k))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = first_unsorted(item, index_path(path, i))
            if found:
                return found
    return None


def check(doc: Doc):
    req = doc.request
    if req is None:
        return
    for seg in req.segments:
        if seg.kind not in ("tool", "schema"):
            continue
        found = first_unsorted(get_path(req.body, seg.path), seg.path)
        if found:
            field, keys = found
            line, col = req.position(field)
            shown = ", ".join(keys[:4]) + (", …" if len(keys) > 4 else "")
            yield Finding(
                RULE,
                RULE.message.format(field=field, keys=shown),
                doc.file.path,
                line,
                col,
                field=field,
                key=field,
                group="keys",
            )
