"""Volatile-content detectors: what in a prompt changes from one request to the next.

:func:`find_volatile` returns each per-request value (times, dates of today, placeholders,
UUIDs, request ids, JWTs, random hex/base64 ids) with its span, kind, severity and reason;
the words around a value decide (rules in :mod:`analyzer.detection.judge`), and code,
examples, historical dates and the like are not findings. One scan: anchors first, shapes
only where an anchor is (:mod:`analyzer.detection.shapes`).

It does NOT know which part of a request is cacheable: callers decide.
See docs/lint.md for every kind and what is not a finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.detection.judge import judged
from analyzer.detection.names import HIGH, MEDIUM
from analyzer.detection.randomness import MAX_ID_CHARS, entropy
from analyzer.detection.shapes import LOW, scan

__all__ = ["HIGH", "MEDIUM", "LOW", "KIND_LABELS", "MAX_ID_CHARS", "Volatile", "entropy", "find_volatile"]

#: Each kind in words, for findings and reasons
KIND_LABELS = {
    "time": "time of day",
    "date": "date",
    "today-phrase": "today/current-date phrase",
    "placeholder": "template placeholder",
    "uuid": "UUID",
    "request-id": "request/session id",
    "jwt": "JWT",
    "hex-id": "random hex id",
    "base64-id": "random base64 id",
}


@dataclass(frozen=True, slots=True)
class Volatile:
    kind: str
    start: int
    end: int
    value: str
    severity: str
    #: why it was judged volatile ("labelled `Current time:`", "calls `new Date()`")
    reason: str = ""


def find_volatile(text: str, *, context: str = "prompt") -> list[Volatile]:
    """Volatile values in ``text``, in order, without overlaps (the strongest kind wins).

    ``context="description"``: the text is a tool or schema description, where a clock time
    or a date counts only with a "now" label or after a today-phrase.
    """
    if not text:
        return []
    return [
        Volatile(c.kind, c.start, c.end, text[c.start : c.end], c.severity, why)
        for c, why in judged(text, scan(text), context)
    ]
