"""Volatile-content detectors: what in a prompt changes from one request to the next.

:func:`find_volatile` returns each per-request value (times and dates of today in any language,
placeholders, UUIDs, request ids, JWTs, random ids, session state) with its span, kind, severity
and reason; the words around a value decide (:mod:`analyzer.detection.judge`), and code,
examples, historical dates and the like are not findings. One scan: anchors first, shapes only
where an anchor is (:mod:`analyzer.detection.shapes`); a kept date repeated is found again.

It does NOT know which part of a request is cacheable: callers decide.
See docs/lint.md for every kind and what is not a finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.detection.candidate import HIGH, LOW, MEDIUM
from analyzer.detection.judge import UNLABELLED, judged
from analyzer.detection.randomness import MAX_ID_CHARS, entropy
from analyzer.detection.repeats import KINDS as REPEATED
from analyzer.detection.repeats import again, without_series
from analyzer.detection.shapes import scan
from analyzer.detection.siblings import block_siblings

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
    "state": "session state",
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
    memo: dict = {}  # this call's answers about the text, for the scan and the judge (never kept)
    cands = scan(text, memo)
    kept = without_series(text, list(judged(text, cands, context, memo)), UNLABELLED)
    if siblings := block_siblings(text, cands, kept):
        kept = sorted(kept + siblings, key=lambda cw: cw[0].start)
    if any(c.kind in REPEATED for c, _ in kept):
        kept = sorted(kept + again(text, kept), key=lambda cw: cw[0].start)
    return [Volatile(c.kind, c.start, c.end, text[c.start : c.end], c.severity, why) for c, why in kept]
