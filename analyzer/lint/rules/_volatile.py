"""How a volatile value is named in a finding: the kind's label, the value shortened, and
where it stands. Shared by the rules that quote a value (PG001–PG008 in
:mod:`.volatile_values`, PG101 and others). This module finds nothing and checks nothing.
"""

from __future__ import annotations

from analyzer.detect import KIND_LABELS as LABELS

__all__ = ["LABELS", "short", "where"]


def short(value: str, limit: int = 48) -> str:
    value = value.replace("\n", "\\n")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def where(field: str | None) -> str:
    return f" at {field}" if field else ""
