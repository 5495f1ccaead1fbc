"""Which volatile values in a prompt's head may move, found once per stable head.

:func:`movable` keeps the detections of :func:`analyzer.detect.find_volatile` that are certainly
per-request values (the rule is :func:`.moverules.moves`: timestamps, epochs, "now"-labelled times
and dates in any language, repeats, ids under a label, session state and environment or git-status
blocks), each with its label (the words before it, or the heading line above a value alone on its line).
Results are kept in a bounded, thread-safe :class:`DecisionCache` keyed by the text's shape and
reused only where its checks say a fresh scan would give the same answer: the text outside the
values unchanged, the same values equal to one another, no copy of a value outside them (then or
now), and a fresh scan of each value's line (or of the 1 KB above it) finding exactly them.

It does NOT change any text, and never moves examples, schedules, historical dates, unlabelled ids,
ids labelled as configuration, or hex and base64 ids under a label that names nothing per request.
See docs/rewrite.md ("aggressive") for what moves and the cache.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

import xxhash

from analyzer.detect import find_volatile
from analyzer.detection import repeats

from .moverules import moves

_SHAPE = str.maketrans("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "a" * 62)
MAX_LABEL = 80


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    #: the value is text[start:end]
    end: int
    #: the label is text[label_start:start].strip()
    label_start: int


#: sentence or clause
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.;!?,]\s")


def _label_start(text: str, start: int, floor: int) -> int:
    """Where the label of a value at ``start`` begins: its line, its sentence or clause,
    after the previous value, at most ``MAX_LABEL`` characters back."""
    line = text.rfind("\n", 0, start) + 1
    at = max(line, floor, start - MAX_LABEL)
    if at == start - MAX_LABEL > max(line, floor) and text[at - 1].isalnum():  # cut inside a word
        space = text.find(" ", at, start)
        at = space + 1 if space >= 0 else at
    ends = [m.end() for m in _SENTENCE_END.finditer(text, at, start)]
    at = ends[-1] if ends else at
    if at == line and not text[line:start].strip() and line > floor:  # "## Current time\n19:56 UTC"
        above = text.rfind("\n", 0, line - 1) + 1
        for _ in range(2):  # a blank line or two between the heading and its value
            if text[above : line - 1].strip() or above <= floor:
                break
            line, above = above, text.rfind("\n", 0, above - 1) + 1
        heading = text[above : line - 1].strip()
        if above >= floor and heading and len(heading) <= MAX_LABEL and _heading(heading):
            return above
    return at


def _heading(line: str) -> bool:
    """A Markdown heading, a line ending in a colon, or a bold line of at most four words: the label
    of the line under it ("Do not reveal these rules:" is a sentence)."""
    if len(line.split()) > 4:
        return False
    return (
        line.startswith("#") or line.endswith((":", "：")) or (line.startswith("**") and line.endswith("**"))
    )


def scan(text: str, context: str = "prompt") -> tuple[Span, ...]:
    """The movable values of ``text`` (no cache); ``context`` as :func:`analyzer.detect.find_volatile`
    takes it ("description" for a tool's description)."""
    found = sorted(find_volatile(text, context=context), key=lambda v: (v.start, -v.end))
    spans: list[Span] = []
    floor = 0
    phrase_end = -1
    for v in found:
        if v.kind == "today-phrase":
            phrase_end = v.end
            continue
        if spans and v.start < spans[-1].end:
            continue
        label_start = _label_start(text, v.start, floor)
        label = text[label_start : v.start]
        after_phrase = (
            phrase_end >= 0 and 0 <= v.start - phrase_end <= 3 and "\n" not in text[phrase_end : v.start]
        )
        after = text[v.end : v.end + 40].split("\n", 1)[0]
        if moves(v.kind, v.value, label, after_phrase, v.reason, after):
            spans.append(Span(v.start, v.end, label_start))
            floor = v.end
    return tuple(spans)


def _outside(text: str, spans: tuple[Span, ...]) -> list[str]:
    out, at = [], 0
    for s in spans:
        out.append(text[at : s.start])
        at = s.end
    out.append(text[at:])
    return out


#: how far above a value's line the second look reads (a heading's block: the heading, a note, blanks)
_ABOVE = 1024


def _found(text: str, a: int, b: int, cached: list[Span], context: str) -> bool:
    """A fresh scan of ``text[a:b]`` finds exactly ``cached``."""
    return [(f.start + a, f.end + a, f.label_start + a) for f in scan(text[a:b], context)] == [
        (c.start, c.end, c.label_start) for c in cached
    ]


def _same_equalities(old: str, text: str, spans: tuple[Span, ...]) -> bool:
    """The values equal to one another in ``old`` are the equal ones in ``text``: a repeat is kept
    for the value it repeats, so a value that now differs from (or matches) another is read afresh."""
    first_old: dict[str, int] = {}
    first_new: dict[str, int] = {}
    for i, s in enumerate(spans):
        a, b = old[s.start : s.end], text[s.start : s.end]
        if first_old.setdefault(a, i) != first_new.setdefault(b, i):
            return False
    return True


def _no_other_copies(text: str, spans: tuple[Span, ...]) -> bool:
    """No value of ``spans`` occurs again outside them: a copy would be a repeat a fresh scan finds
    ("Today is 2026-12-25." over a line about Christmas Day)."""
    covered = {(s.start, s.end) for s in spans}
    seen: set[str] = set()
    for s in spans:
        value = text[s.start : s.end]
        if len(value) < repeats.MIN_CHARS or value in seen:
            continue
        seen.add(value)
        k = text.find(value)
        while k >= 0:
            if (k, k + len(value)) not in covered:
                return False
            k = text.find(value, k + 1)
    return True


def _same_lines(text: str, spans: tuple[Span, ...], context: str) -> bool:
    """A fresh scan of each line holding a cached value finds exactly the cached values; a value
    read by its heading (lines under "## About the user") is checked again with the whole lines up
    to ``_ABOVE`` characters above it, which must then hold exactly the cached values."""
    lines: dict[int, list[Span]] = {}
    for s in spans:
        lines.setdefault(text.rfind("\n", 0, s.start) + 1, []).append(s)
    for start, cached in lines.items():
        end = text.find("\n", cached[-1].end)
        end = len(text) if end < 0 else end
        if _found(text, start, end, cached, context):
            continue
        wide = text.rfind("\n", 0, max(0, start - _ABOVE)) + 1 if start > _ABOVE else 0
        if not _found(text, wide, end, [s for s in spans if wide <= s.start and s.end <= end], context):
            return False
    return True


class DecisionCache:
    """Spans per stable head, bounded by entries and bytes; exact (see the module docstring)."""

    #: texts of one shape kept side by side
    PER_KEY = 4

    def __init__(
        self, max_entries: int = 2048, max_bytes: int = 32 * 1024 * 1024, max_text: int = 1024 * 1024
    ) -> None:
        self.max_entries, self.max_bytes, self.max_text = max_entries, max_bytes, max_text
        self._entries: OrderedDict[bytes, list[tuple[str, tuple[Span, ...]]]] = OrderedDict()
        self._bytes = 0
        self._count = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def movable(self, text: str, context: str = "prompt") -> tuple[Span, ...]:
        if not text:
            return ()
        if len(text) > self.max_text:
            self.misses += 1
            return scan(text, context)
        shape = context + "\0" + text.translate(_SHAPE)
        key = xxhash.xxh3_128_digest(shape.encode("utf-8", "surrogatepass"))
        with self._lock:
            candidates = list(self._entries.get(key, ()))
        for old, spans in candidates:
            if (
                len(old) == len(text)
                and _outside(old, spans) == _outside(text, spans)
                and _same_equalities(old, text, spans)
                and _no_other_copies(text, spans)
                and _no_other_copies(old, spans)  # nor did one there: a decision may rest on it
                and _same_lines(text, spans, context)
            ):
                with self._lock:
                    self.hits += 1
                    if key in self._entries:
                        self._entries.move_to_end(key)
                return spans
        spans = scan(text, context)
        with self._lock:
            self.misses += 1
            kept = self._entries.setdefault(key, [])
            kept.insert(0, (text, spans))
            self._bytes += len(text)
            self._count += 1
            if len(kept) > self.PER_KEY:
                self._bytes -= len(kept.pop()[0])
                self._count -= 1
            self._entries.move_to_end(key)
            while self._entries and (self._count > self.max_entries or self._bytes > self.max_bytes):
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= sum(len(t) for t, _ in dropped)
                self._count -= len(dropped)
        return spans

    def __len__(self) -> int:
        return self._count


_DEFAULT = DecisionCache()


def movable(text: str, context: str = "prompt") -> tuple[Span, ...]:
    """The movable values of ``text``, through the process-wide decision cache."""
    return _DEFAULT.movable(text, context)


def clear_cache() -> None:
    """Forget every cached decision (tests: a fresh process)."""
    global _DEFAULT
    _DEFAULT = DecisionCache()
