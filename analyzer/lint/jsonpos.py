"""Where each JSON value sits in the raw text: field path → (start, end) character offsets.

The ``json`` module gives values, not positions; lint findings need both the field path
(``messages[0].content``, in :mod:`analyzer.jsonpath` syntax) and a line and column in the
file. This is a small scanner over already-valid JSON (parse it with ``json.loads`` first):
it records the span of every value, and :func:`string_offset` maps an index into a decoded
string back to the raw text (escapes such as ``\\n`` and ``\\u00e9`` take several raw
characters for one decoded one).

It does not validate JSON and does not build values.
"""

from __future__ import annotations

import bisect
import json
import re

from analyzer.jsonpath import index_path, key_path

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


def locate(raw: str, start: int = 0) -> dict[str, tuple[int, int]]:
    """Spans of every value in the JSON text ``raw`` (root path is ``""``)."""
    spans: dict[str, tuple[int, int]] = {}

    def skip(i: int) -> int:
        return _WS.match(raw, i).end()

    def value(i: int, path: str) -> int:
        i = skip(i)
        ch = raw[i]
        begin = i
        if ch == "{":
            i = skip(i + 1)
            if raw[i] == "}":
                i += 1
            else:
                while True:
                    m = _STRING.match(raw, skip(i))
                    name = json.loads(m.group(0))
                    i = skip(m.end())
                    i = value(i + 1, key_path(path, name))
                    i = skip(i)
                    if raw[i] == ",":
                        i += 1
                        continue
                    i += 1
                    break
        elif ch == "[":
            i = skip(i + 1)
            if raw[i] == "]":
                i += 1
            else:
                n = 0
                while True:
                    i = value(i, index_path(path, n))
                    n += 1
                    i = skip(i)
                    if raw[i] == ",":
                        i += 1
                        continue
                    i += 1
                    break
        elif ch == '"':
            i = _STRING.match(raw, i).end()
        else:
            i = _SCALAR.match(raw, i).end()
        spans[path] = (begin, i)
        return i

    value(start, "")
    return spans


def string_offset(raw: str, start: int, index: int) -> int:
    """Raw offset of decoded character ``index`` of the JSON string token at ``start``.

    Runs of plain characters are skipped with ``str.find`` (a megabyte string without
    escapes costs one search, not a Python loop per character); stops at the closing quote.
    """
    i, n = start + 1, 0
    while n < index:
        stop = i + (index - n)  # where the target is if no escape comes first
        esc = raw.find("\\", i, stop)
        quote = raw.find('"', i, stop if esc < 0 else esc)
        if quote >= 0:
            return quote  # the string ended first
        if esc < 0:
            return min(stop, len(raw))
        n += esc - i
        i = esc
        if raw[i + 1] == "u":
            code = int(raw[i + 2 : i + 6], 16)
            i += 6
            if 0xD800 <= code < 0xDC00 and raw.startswith("\\u", i):  # surrogate pair: one char
                i += 6
        else:
            i += 2
        n += 1
    return i


def line_col(text: str, offset: int, line_starts: list[int] | None = None) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``."""
    starts = line_starts if line_starts is not None else line_starts_of(text)
    line = bisect.bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


def line_starts_of(text: str) -> list[int]:
    starts = [0]
    if "\r" not in text:  # "\n" alone ends lines: found with str.find, ten times the regex's speed
        k = text.find("\n")
        while k >= 0:
            starts.append(k + 1)
            k = text.find("\n", k + 1)
        return starts
    for m in re.finditer(r"\r\n|\n|\r(?!\n)", text):
        starts.append(m.end())
    return starts
