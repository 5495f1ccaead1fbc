"""Which volatile values in a prompt's head may move, found once per stable head.

:func:`movable` runs :func:`analyzer.detect.find_volatile` on a text and keeps only the
detections that are certainly per-request values, each with its label (the words before
it on its line, e.g. ``Current date and time:``):

- timestamps (a date with a clock time), epoch seconds or milliseconds;
- clock times and dates only when their label says they are *now*: a today-phrase
  ("Today is", "The current time is") or a label naming the current date/time
  (``Current time:``, ``Date:``, ``now=``); never opening hours, example times
  ("e.g. 14:30"), timezone offsets (``+05:30``), knowledge-cutoff, "last updated",
  release or historical dates;
- UUIDs, request/session/trace ids, JWTs and random hex/base64 ids, except where the
  label shows them to be an example ("e.g.", "such as", "example", "format").

Detection costs about 10 ms per 20 KB, far too much per request, so results are kept in a
:class:`DecisionCache` keyed by the text's *shape* (every hex digit mapped to ``0``): a
system prompt that differs from an earlier one only inside the values found there (the
clock ticked, a new request id) reuses the earlier spans after an exact check that every
byte outside them is the same. Same input, same output, in every process.

This module does not change any text.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

import xxhash

from analyzer.detect import find_volatile

_ALWAYS = {"uuid", "request-id", "jwt", "hex-id", "base64-id"}
_NOW_LABEL = re.compile(r"(?i)\b(?:now|current(?:ly)?|today(?:'s)?|time(?:stamp)?|date(?:time)?|clock|as of|ts|at)\b\W*$")
_NOT_NOW = re.compile(r"(?i)\b(?:cut-?off|updated|since|founded|released?|version|effective|until|expires?|deadline|born|opens?|closes?|hours|between|from|e\.g\.|example|such as|like|for instance|format|range)\b")
_EXAMPLE = re.compile(r"(?i)(?:\be\.g\.|\bi\.e\.|example|such as|\blike\b|for instance|format|sample|placeholder|looks? like)\W*$")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d|\d{1,2}:\d{2}.*\d{4}|\d{4}.*\d{1,2}:\d{2}")
_EPOCH = re.compile(r"^\d{10}(?:\d{3})?$")
_HEX_SHAPE = str.maketrans("123456789abcdefABCDEF", "0" * 21)
MAX_LABEL = 80


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int  # the value is text[start:end]
    label_start: int  # the label is text[label_start:start].strip()


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.;!?]\s")


def _label_start(text: str, start: int, floor: int) -> int:
    """Where the label of a value at ``start`` begins: its line, its sentence, after the
    previous value, at most ``MAX_LABEL`` characters back."""
    at = max(text.rfind("\n", 0, start) + 1, floor, start - MAX_LABEL)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, at, start)]
    return ends[-1] if ends else at


def _moves(kind: str, value: str, label: str, after_today_phrase: bool) -> bool:
    if kind in _ALWAYS:
        return not _EXAMPLE.search(label)
    if kind == "time":
        if _EPOCH.match(value) or _TIMESTAMP.search(value):
            return not _EXAMPLE.search(label)
        return after_today_phrase or (bool(_NOW_LABEL.search(label)) and not _NOT_NOW.search(label))
    if kind == "date":
        return after_today_phrase or (bool(_NOW_LABEL.search(label)) and not _NOT_NOW.search(label))
    return False  # today-phrases are wording; placeholders are the same text every time


def scan(text: str) -> tuple[Span, ...]:
    """The movable values of ``text`` (no cache)."""
    found = sorted(find_volatile(text), key=lambda v: (v.start, -v.end))
    spans: list[Span] = []
    floor = 0
    phrase_end = -1
    for v in found:
        if v.kind == "today-phrase":
            phrase_end = v.end
            continue
        if spans and v.start < spans[-1].end:
            continue  # overlaps one already taken
        label_start = _label_start(text, v.start, floor)
        label = text[label_start:v.start]
        after_phrase = phrase_end >= 0 and 0 <= v.start - phrase_end <= 3 and "\n" not in text[phrase_end:v.start]
        if _moves(v.kind, v.value, label, after_phrase):
            spans.append(Span(v.start, v.end, label_start))
            floor = v.end
    return tuple(spans)


def _outside(text: str, spans: tuple[Span, ...]) -> list[str]:
    out, at = [], 0
    for s in spans:
        out.append(text[at:s.start])
        at = s.end
    out.append(text[at:])
    return out


class DecisionCache:
    """Spans per stable head, LRU-bounded; exact for any text (see the module docstring)."""

    def __init__(self, max_entries: int = 512) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, tuple[str, tuple[Span, ...]]] = OrderedDict()
        self.hits = self.misses = 0

    def movable(self, text: str) -> tuple[Span, ...]:
        if not text:
            return ()
        key = xxhash.xxh3_128_digest(text.translate(_HEX_SHAPE).encode("utf-8", "surrogatepass"))
        entry = self._entries.get(key)
        if entry is not None:
            old, spans = entry
            if len(old) == len(text) and _outside(old, spans) == _outside(text, spans):
                self._entries.move_to_end(key)
                self.hits += 1
                return spans
        self.misses += 1
        spans = scan(text)
        self._entries[key] = (text, spans)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return spans


_DEFAULT = DecisionCache()


def movable(text: str) -> tuple[Span, ...]:
    """The movable values of ``text``, through the process-wide decision cache."""
    return _DEFAULT.movable(text)
