"""Recorded HTTP exchanges (VCR cassettes: vcrpy, pytest-recording, Ruby VCR) read as the prompts they sent.

A cassette is YAML with a top-level ``interactions:`` (Ruby VCR: ``http_interactions:``) list of
``request:`` / ``response:`` pairs. Only each request's ``body`` is what the app sent the model; the
response (its ids, ``Date`` header, ``created`` time) and the request's headers are the exchange's
record, never a cacheable prompt.
:func:`request_bodies` gives the spans of the request bodies' text, found by indentation (the body's
scalar, inline or in a block under it; of a body mapping, its ``string:``), so positions stay those
of the file.

It does NOT parse YAML or decode the body (the detector reads the scalar as it is written), nor read
JSON cassettes (HAR, Polly): those are request logs (:mod:`.inputs`).
"""

from __future__ import annotations

import re

_TOP = re.compile(r"^(?:http_)?interactions:[ \t]*$", re.M)
#: the text of a body written as a mapping (``encoding:`` beside ``string:``)
_STRING = re.compile(r"^[ \t]*string:", re.M)
_REQUEST = re.compile(r"^(?P<i>[ \t]*)(?:-[ \t]+)?request:[ \t]*$", re.M)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t-"))


def request_bodies(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) of each request body's text, or None when ``text`` is no cassette."""
    if not _TOP.search(text) or "response:" not in text:
        return None
    out = []
    for req in _REQUEST.finditer(text):
        level = _indent(text[req.start() : req.end()])
        at = req.end() + 1
        while at < len(text):
            le = text.find("\n", at)
            le = len(text) if le < 0 else le
            line = text[at:le]
            if line.strip() and _indent(line) <= level:
                break  # the request's mapping ended (its response, or the next interaction)
            if line.lstrip().startswith("body:"):
                out.append(_body(text, at + line.index("body:") + 5, _indent(line)))
            at = le + 1
    return [(a, b) for a, b in out if b > a]


def _body(text: str, at: int, level: int) -> tuple[int, int]:
    """A body's text: its scalar, or its ``string:`` when it is a mapping."""
    start, end = _scalar(text, at, level)
    if text.startswith("!!binary", start) or re.search(r"(?m)^[ \t]*base64_string:", text[start:end]):
        return start, start  # an encoded body: bytes, not the prompt's text
    key = _STRING.search(text, text.rfind("\n", 0, start) + 1, end)
    if key is None or not text[start:end].lstrip().startswith(("encoding:", "string:")):
        return start, end
    line_start = text.rfind("\n", 0, key.start()) + 1
    start, end = _scalar(text, key.end(), _indent(text[line_start : key.end()]))
    return (start, start) if text.startswith("!!binary", start) else (start, end)


def _scalar(text: str, at: int, level: int) -> tuple[int, int]:
    """The value after ``body:`` at text[at]: to the last line indented deeper than its key."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    while end < len(text):
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        line = text[end + 1 : nxt]
        if line.strip() and _indent(line) <= level:
            break
        end = nxt
    start = at + len(text[at:end]) - len(text[at:end].lstrip())
    return start, len(text[:end].rstrip())
