"""Where a reading's label words stand in a text (:func:`_reading_keys`), for :func:`.session.readings`.

Every reading has a digit near its key word, so the keys are searched only in the stretches near a
digit (:func:`_digit_spans`), joined into one string: one ``str.find`` pass a key over a part of the text.

It does NOT read the numbers (:mod:`.session` does).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

#: the words a reading is labelled with; none is a prefix of another, so the leftmost
#: non-overlapping runs of :func:`_reading_keys` are a regex alternation's matches
_READING_KEYS = tuple("token memory battery iteration attempt credit quota context remaining step".split())
_READING_KEYS += ("ve used",)
_DIGIT = re.compile(r"\d")


def _reading_keys(low: str, text: str | None = None) -> list[tuple[int, int]]:
    """The spans of :data:`_READING_KEYS` in ``low``, left to right and without overlaps (as
    ``re.finditer`` of their alternation would give them), found with ``str.find``; given ``text``,
    only those with a digit near (every reading has one), found only in :func:`_digit_spans`."""
    parts = _digit_spans(text) if text is not None else [(0, len(low))]
    joined = "\0".join([low[lo:hi] for lo, hi in parts])  # one find a key: no key holds "\0"
    starts = list(accumulate((hi - lo + 1 for lo, hi in parts[:-1]), initial=0))  # each part's in ``joined``
    spans = []
    for key in _READING_KEYS:
        k = joined.find(key)
        while k >= 0:
            i = bisect_right(starts, k) - 1
            a = parts[i][0] + k - starts[i]
            spans.append((a, a + len(key)))
            k = joined.find(key, k + 1)
    spans.sort()
    out: list[tuple[int, int]] = []
    end = -1
    for a, b in spans:
        if a >= end:
            end = b
            if text is None or _DIGIT.search(text, max(0, a - 16), a + 32):
                out.append((a, b))
    return out


#: a digit (or any non-ASCII character, "?" once encoded, which may be one) as 1, else 0
_MAYBE_DIGIT = bytes(1 if i in b"0123456789?" else 0 for i in range(256))
#: how far before a key that passes the digit test an overlapping key may start that decides it
#: (quota, then attempt at +4, then token at +10: tests check no chain of keys reaches this far)
KEY_CHAIN_REACH = 24


def _digit_spans(text: str) -> list[tuple[int, int]]:
    """The parts of the text that hold every reading key with a digit in text[a-16:a+32] and every
    key overlapping one before it (:data:`KEY_CHAIN_REACH`), merged: the keys are searched there
    only. The digits are found in the text encoded, each non-ASCII character as a "?" taken for a
    digit (a superset: each key found keeps the exact digit test). Exact for the non-overlapping
    runs: a key's fate depends only on keys starting within the reach before it."""
    marks = text.encode("ascii", "replace").translate(_MAYBE_DIGIT)
    # a run of digits from k to e covers text[k - _BEFORE : e + _AFTER]; two runs' parts merge when
    # they touch, so when at most _BEFORE + _AFTER non-digits part them: one match a merged part
    return [(max(0, m.start() - _BEFORE), m.end() + _AFTER) for m in _NEAR_DIGITS.finditer(marks)]


_BEFORE, _AFTER = 31 + KEY_CHAIN_REACH, 15 + 9  # key starts up to e + 15, 9 characters at most
#: runs of digits (1) parted by at most _BEFORE + _AFTER others (0), found from a literal first byte;
#: possessive, no backtracking: fewer zeros than it took are followed by a 0, never by a 1
_NEAR_DIGITS = re.compile(rb"\x01(?:\x00{0,%d}+\x01)*" % (_BEFORE + _AFTER))
