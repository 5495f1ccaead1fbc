"""Shared body of the volatile-value rules (PG001–PG008): one finding per detected value
of the rule's kinds inside the cacheable prefix. Values in the per-request tail (after the
last breakpoint, or in the last message) are where volatile content belongs: not findings.
"""

from __future__ import annotations

from typing import Iterator

from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule

LABELS = {"time": "time of day", "date": "date", "today-phrase": "today/current-date phrase", "placeholder": "template placeholder",
          "uuid": "UUID", "request-id": "request/session id", "jwt": "JWT", "hex-id": "random hex id", "base64-id": "random base64 id"}


def short(value: str, limit: int = 48) -> str:
    value = value.replace("\n", "\\n")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def where(field: str | None) -> str:
    return f" at {field}" if field else ""


def volatile_findings(rule: Rule, kinds: tuple[str, ...], doc: Doc, *, own_severity: bool = False) -> Iterator[Finding]:
    for unit, vols in zip(doc.units, doc.vols):
        if not unit.cacheable:
            continue
        for v in vols:
            if v.kind not in kinds:
                continue
            line, col = unit.position(v.start)
            end_line, end_col = unit.position(v.end)
            msg = rule.message.format(label=LABELS[v.kind], value=short(v.value), where=where(unit.field))
            yield Finding(rule, msg, doc.file.path, line, col, end_line, end_col, field=unit.field,
                          key=f"{v.kind}:{v.value}", group=v.kind, severity=v.severity if own_severity else None)
