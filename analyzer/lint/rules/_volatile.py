"""How a volatile value is named in a finding: the kind's label, the value shortened, where
it stands and why it was judged volatile. Shared by the rules that quote a value (PG001–PG009 in
:mod:`.volatile_values`, PG101 and others). This module finds nothing and checks nothing.
"""

from __future__ import annotations

from analyzer.detect import KIND_LABELS as LABELS

__all__ = ["LABELS", "because", "short", "where"]


def short(value: str, limit: int = 48) -> str:
    value = value.replace("\n", "\\n")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def because(v) -> str:
    """`` — follows `Current time`: why the detector judged the value volatile, ending the message."""
    return f" — {v.reason}" if getattr(v, "reason", "") else ""


def where(field: str | None) -> str:
    return f" at {field}" if field else ""
