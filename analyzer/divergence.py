"""Where two requests' prefixes fork, and why.

:func:`common_prefix_len` and :func:`shared_segments` measure the shared prefix; :func:`fork`
names the first differing segment, the byte offset in its canonical JSON and the reason
(``tool-order`` … ``schema-changed``, or None for new content); :func:`volatile_span` gives
the volatile value at an offset; :func:`text_fork` the first differing prompt string and its
cause (:data:`CAUSES`). Detection looks only at a small window around the difference.

It does NOT know model changes or the provider's rules for a prefix that did repeat
(:mod:`analyzer.diagnose`), nor remember earlier requests. See docs/money.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from analyzer.detect import KIND_LABELS
from analyzer.segments import Segment, segment_strings

if TYPE_CHECKING:
    from analyzer.detect import Volatile

#: characters each side of a difference in a prompt string
TEXT_WINDOW = 96
#: bytes each side of a difference in a segment's canonical JSON
BYTE_WINDOW = 64
#: below it, two strings are not one template with a changed value
MIN_SIMILARITY = 0.5
VOLATILE_LABELS = KIND_LABELS
#: TextFork.kind → words
CAUSES = {**VOLATILE_LABELS, "content": "changed content"}


def common_prefix_len(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` share. Bytes and text: slices of doubling size
    are compared until one differs, then that slice is halved down to the first difference,
    so the work grows with where they differ, not with their length; a C-speed compare per
    step. Other sequences (chain hashes, segment keys: one item per segment) are walked."""
    m = min(len(a), len(b))
    if not isinstance(a, (bytes, str)):
        for n, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return n
        return m
    lo, step = 0, 64
    while True:  # invariant: a[:lo] == b[:lo]
        hi = min(m, lo + step)
        if a[lo:hi] != b[lo:hi]:
            break
        if hi == m:
            return m
        lo, step = hi, step * 2
    while hi - lo > 1:  # invariant: a[:lo] == b[:lo] and a[lo:hi] != b[lo:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def shared_segments(a: Sequence[Segment], b: Sequence[Segment]) -> int:
    """Leading segments of ``a`` and ``b`` with equal bytes."""
    n = 0
    for x, y in zip(a, b):
        if x.data != y.data:
            break
        n += 1
    return n


def volatile_at(text: str, index: int, *, window: int = TEXT_WINDOW, lead: int = 2) -> Volatile | None:
    """The detected value covering ``index`` of ``text``, or starting at most ``lead`` characters
    after it; only ``window`` characters each side are scanned."""
    from analyzer.detect import Volatile, find_volatile  # imported late: detection is the heavy part

    lo = max(0, index - window)
    for v in find_volatile(text[lo : index + window]):
        start, end = v.start + lo, v.end + lo
        if start <= index < end or index <= start <= index + lead:
            return Volatile(v.kind, start, end, v.value, v.severity)
    return None


@dataclass(frozen=True, slots=True)
class Fork:
    #: index of the first differing segment
    segment: int
    #: its field path in the later request
    path: str
    #: byte offset of the first difference in its canonical JSON (without the tag)
    offset: int
    #: see the module table; None: new content, not a cache miss
    reason: str | None


def fork(earlier: Sequence[Segment], later: Sequence[Segment], shared: int | None = None) -> Fork | None:
    """Where and why ``later`` leaves ``earlier``'s prefix (``shared``: their shared segments,
    computed when None); None when either has no segment there (one is a prefix of the other)."""
    index = shared_segments(earlier, later) if shared is None else shared
    if index >= len(earlier) or index >= len(later):
        return None
    a, b = later[index], earlier[index]
    body_a, body_b = a.body, b.body
    offset = common_prefix_len(body_a, body_b)

    def found(reason: str | None) -> Fork:
        return Fork(index, a.path, offset, reason)

    if a.kind == b.kind == "tool" and sorted(_tools(later)) == sorted(_tools(earlier)):
        return found("tool-order")
    if a.kind == b.kind and len(body_a) == len(body_b) and _same_json(body_a, body_b):
        return found("json-key-order")  # reordering keys keeps the length: a cheap first test
    if a.kind == "tool" or b.kind == "tool":
        return found("tools-changed")
    if a.kind == "message" and index == len(later) - 1:
        return found(None)
    if a.kind == b.kind:
        kind = _volatile_kind(body_a, offset) or _volatile_kind(body_b, offset)
        if kind is not None:
            return found(f"volatile-{kind}")
    if a.kind in ("system", "instructions") or a.role in ("system", "developer"):
        return found("system-changed")
    if a.kind == "schema":
        return found("schema-changed")
    return found(None)


def _tools(segments: Sequence[Segment]) -> list[bytes]:
    return [s.data for s in segments if s.kind == "tool"]


def _same_json(a: bytes, b: bytes) -> bool:
    try:
        return orjson.loads(a) == orjson.loads(b)  # dict equality ignores key order
    except orjson.JSONDecodeError:
        return False


def _volatile_kind(data: bytes, offset: int) -> str | None:
    """The kind of volatile value covering byte ``offset`` of canonical JSON, looking only near it."""
    span = volatile_span(data, offset)
    return span[0] if span is not None else None


def volatile_span(data: bytes, offset: int, window: int = BYTE_WINDOW) -> tuple[str, int, int] | None:
    """The volatile value covering byte ``offset`` of ``data`` (canonical JSON): its kind and
    its start and end as byte offsets of ``data``; only ``window`` bytes each side are read."""
    lo = max(0, offset - window)
    while lo < offset and data[lo] & 0xC0 == 0x80:  # start on a character, so offsets map back exactly
        lo += 1
    text = data[lo : offset + window].decode("utf-8", "ignore")
    found = volatile_at(text, len(data[lo:offset].decode("utf-8", "ignore")), window=window, lead=0)
    if found is None:
        return None
    return found.kind, lo + len(text[: found.start].encode()), lo + len(text[: found.end].encode())


@dataclass(frozen=True)
class TextFork:
    segment: int
    #: path of the differing string (or of the segment when no string differs)
    field: str
    #: first differing character in that string
    offset: int
    #: offsets relative to the whole string
    volatile: Volatile | None
    #: the later request's string
    text: str
    #: the earlier request's string
    before: str = ""

    @property
    def kind(self) -> str:
        """The volatile value's kind, or ``content``."""
        return self.volatile.kind if self.volatile else "content"

    @property
    def at(self) -> int:
        """Where the cause starts in the string: the volatile value, else the first difference."""
        return self.volatile.start if self.volatile else self.offset

    @property
    def similarity(self) -> float:
        """Share of the shorter string outside the differing middle (1.0: one small value changed)."""
        n = min(len(self.text), len(self.before))
        if n == 0:
            return 0.0
        same_tail = common_prefix_len(self.text[self.offset :][::-1], self.before[self.offset :][::-1])
        return min(1.0, (self.offset + same_tail) / n)


def text_fork(
    earlier_body: Any,
    earlier: Sequence[Segment],
    later_body: Any,
    later: Sequence[Segment],
    shared: int | None = None,
) -> TextFork | None:
    """Why ``later_body`` stops sharing ``earlier_body``'s prefix after ``shared`` segments
    (computed when None); None when either has no segment there."""
    if shared is None:
        shared = shared_segments(earlier, later)
    if shared >= len(earlier) or shared >= len(later):
        return None
    before = dict(segment_strings(earlier_body, earlier[shared]))
    for path, text in segment_strings(later_body, later[shared]):
        other = before.get(path)
        if other != text:
            idx = common_prefix_len(other or "", text)
            return TextFork(shared, path, idx, volatile_at(text, idx), text, other or "")
    return TextFork(shared, later[shared].path, 0, None, "")
