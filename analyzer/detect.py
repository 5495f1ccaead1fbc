"""Volatile-content detectors: what in a prompt changes from one request to the next.

A provider caches exact prefixes, so one value that differs per request (a clock time, a
request id, today's date) forks every request at that point. :func:`find_volatile` returns
each such value with its exact character span, a kind, a severity and the reason it was
judged volatile:

=================  ==========  ==================================================
kind               severity    what
=================  ==========  ==================================================
``time``           high        ISO timestamps, clock times labelled as now (or to
                               the second, or with a zone), epoch seconds next to a
                               time word (``ts=1700000000``), epoch milliseconds
``date``           low         ISO, written-out and numeric dates labelled as today
                               (or standing alone on a line)
``today-phrase``   medium      "today is …", "current date: …" followed by a value
``placeholder``    high/med    template slots volatile by name (``{{now}}``,
                               ``{turn_count}``, ``{{ REMAINING_QUOTA }}``), by what
                               they call (``${new Date().toISOString()}``) or by
                               their label (``Current date: ${EXPR}``)
``uuid``           high        generated 8-4-4-4-12 UUIDs
``request-id``     high        values after request/session/trace/… id labels and
                               provider-style ids (``req_…``, ``chatcmpl-…``)
``jwt``            high        three base64url parts starting ``eyJ``
``hex-id``         high        ≥16 random-looking hex digits (entropy-checked)
``base64-id``      high        ≥22 random-looking base64 characters
=================  ==========  ==================================================

A per-request value and a fixed one can look alike; the words around a value decide (the
rules are listed in :mod:`analyzer.detection.judge`). Not findings: anything in fenced or
inline code; examples ("e.g. 14:30", "like 7:45 PM", "such as <uuid>"); knowledge cut-off,
"last updated", release, founding and other historical dates; dates in running prose
without a "now" label; API version dates and changelog lines; schedules and time ranges;
time-zone offsets (``+05:30``); version numbers, prices, bare years, phone numbers;
patterned, name-based and vendor-family UUIDs; digests labelled as a commit / SHA / hash /
checksum; ids inside links; encoded blobs longer than 512 characters.

Detection scans once (:mod:`analyzer.detection.shapes`): anchors first, shapes only where
an anchor is. This module does not know which part of a request is cacheable; callers decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.detection.judge import judged
from analyzer.detection.names import HIGH, MEDIUM
from analyzer.detection.randomness import MAX_ID_CHARS, entropy
from analyzer.detection.shapes import LOW, scan

__all__ = ["HIGH", "MEDIUM", "LOW", "KIND_LABELS", "MAX_ID_CHARS", "Volatile", "entropy", "find_volatile"]

KIND_LABELS = {"time": "time of day", "date": "date", "today-phrase": "today/current-date phrase",
               "placeholder": "template placeholder", "uuid": "UUID", "request-id": "request/session id", "jwt": "JWT",
               "hex-id": "random hex id", "base64-id": "random base64 id"}  # each kind in words, for findings and reasons


@dataclass(frozen=True, slots=True)
class Volatile:
    kind: str
    start: int
    end: int
    value: str
    severity: str
    reason: str = ""  # why it was judged volatile ("labelled `Current time:`", "calls `new Date()`")


def find_volatile(text: str, *, context: str = "prompt") -> list[Volatile]:
    """Volatile values in ``text``, in order, without overlaps (the strongest kind wins).

    ``context="description"``: the text is a tool or schema description, where a clock time
    or a date counts only with a "now" label or after a today-phrase.
    """
    if not text:
        return []
    return [Volatile(c.kind, c.start, c.end, text[c.start:c.end], c.severity, why) for c, why in judged(text, scan(text), context)]
