"""What a strict HTTP/1.1 reader would refuse that llhttp, as the pool runs it, lets through.

Checks response framing bytes against RFC 9112 (CRLF line ends) after llhttp accepted them:
:func:`strict_heads`, :func:`strict_codings` and :class:`ChunkFraming`. A violation only
forbids reuse (:mod:`proxy.transport.reuse`); the caller still gets what llhttp framed.

It does not parse bodies for the caller, decide reuse, or read sockets.
See docs/request-path.md.
"""

from __future__ import annotations

import re

_TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
#: a field value with its optional whitespace; a reason phrase
_TEXT = rb"[\t\x20-\x7e\x80-\xff]*"
_HEAD = re.compile(
    rb"HTTP/1\.[01] ([0-9]{3})(?: " + _TEXT + rb")?\r\n(?:" + _TOKEN + rb":" + _TEXT + rb"\r\n)*\r\n"
)
_FIELD = re.compile(_TOKEN + rb":" + _TEXT)
_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})(?:;[\t\x20-\x7e\x80-\xff]*)?")
_BLANK = re.compile(rb"\r?\n\r?\n")
_BARE_LF = re.compile(rb"(?<!\r)\n")
_FOLD = re.compile(rb"\n[ \t]")
#: a framing line longer than this is not checked further: the connection is not reused
MAX_LINE = 256 * 1024


def strict_heads(data: bytes) -> tuple[int | None, str | None]:
    """(offset just past the final head, None) when ``data`` starts with strict heads (any
    number of interim ``1xx``, then a final one); else (None, why). ``data`` holds at least
    every head llhttp parsed (it may go on into the body)."""
    pos = 0
    while True:
        m = _HEAD.match(data, pos)
        if m is None:
            return None, _why(data[pos:])
        pos = m.end()
        status = m.group(1)
        if not status.startswith(b"1") or status == b"101":
            return pos, None


def _why(rest: bytes) -> str:
    if rest[:1] in (b"\r", b"\n"):
        return "an empty line before the status line"
    end = _BLANK.search(rest)
    head = rest[: end.end()] if end else rest
    if _BARE_LF.search(head):
        return "a bare LF ends a line of the head"
    if _FOLD.search(head):
        return "obsolete line folding in the head"
    return "a head line outside RFC 9112's grammar"


def strict_codings(headers: list[tuple[bytes, bytes]]) -> str | None:
    """Why the head's ``Transfer-Encoding`` fields are not strict (None when they are)."""
    codings = [value for name, value in headers if name.lower() == b"transfer-encoding"]
    if not codings:
        return None
    if len(codings) > 1:
        return "more than one Transfer-Encoding field"
    if codings[0].strip(b" \t").lower() != b"chunked":
        return f"Transfer-Encoding {codings[0][:40]!r} (only 'chunked' is strict)"
    return None


_SIZE_LINE, _DATA, _DATA_END, _TRAILER, _DONE = range(5)
_ONE_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,16})\r\n")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_CR = 13


def _hex(data: bytes, start: int, end: int) -> int:
    """The chunk size ``data[start:end]`` when it is plain hex digits (no extension), else 0."""
    if end - start > 16 or not _HEX.issuperset(data[start:end]):
        return 0
    return int(data[start:end], 16)


class ChunkFraming:
    """Checks a chunked body's framing lines as the bytes after the head arrive, in any
    pieces; :attr:`fault` says what was not strict (None so far). Stops checking at the
    first fault or at the end of the body (bytes after it are the parser's leftover).
    ``left``: data bytes of the current chunk still to come; ``line``: the framing line so far
    (it may span arrivals)."""

    __slots__ = ("state", "left", "line", "fault")

    def __init__(self) -> None:
        self.state = _SIZE_LINE
        self.left = 0
        self.line = b""
        self.fault: str | None = None

    def feed(self, data: bytes) -> None:
        """The next bytes of the body's framing. The usual cases (an arrival that is exactly one
        whole chunk, a plain size line, the CRLF after a chunk's data) take a short cut."""
        if self.fault is not None or self.state == _DONE:
            return
        state, left, i, n = self.state, self.left, 0, len(data)
        if state == _SIZE_LINE and not self.line:
            m = _ONE_CHUNK.match(data)
            if (
                m is not None
                and (end := m.end() + int(m.group(1), 16)) + 2 == n
                and data.endswith(b"\r\n")
                and end > m.end()
            ):
                return
        if self.line:
            # a framing line split across arrivals: finish it first
            j = data.find(b"\n")
            if j < 0:
                self.line += data
                if len(self.line) > MAX_LINE:
                    self.fault = "a chunk framing line too long to check"
                return
            line, self.line, i = self.line + data[: j + 1], b"", j + 1
            state, left = self._line(line, state)
        while i < n and self.fault is None and state != _DONE:
            if state == _DATA:
                if n - i < left:
                    left -= n - i
                    break
                i += left
                left, state = 0, _DATA_END
                continue
            j = data.find(b"\n", i)
            if j < 0:
                self.line = data[i:]
                break
            if state == _DATA_END and j == i + 1 and data[i] == _CR:
                state = _SIZE_LINE
            elif state == _SIZE_LINE and j > i and data[j - 1] == _CR and (size := _hex(data, i, j - 1)):
                state, left = _DATA, size
            else:
                state, left = self._line(data[i : j + 1], state)
            i = j + 1
        self.state, self.left = state, left

    def _line(self, line: bytes, state: int) -> tuple[int, int]:
        """One whole framing line (ending in LF) in ``state``: (the next state, data bytes to
        come). Past the last chunk come trailer lines, until the empty line that ends the body."""
        if line[-2:-1] != b"\r" or b"\r" in line[:-2]:
            self.fault = "a bare LF (or CR) in the chunked framing"
            return state, 0
        text = line[:-2]
        if state == _SIZE_LINE:
            m = _SIZE.fullmatch(text)
            if m is None:
                self.fault = "a chunk size line outside RFC 9112's grammar"
                return state, 0
            size = int(m.group(1), 16)
            return (_DATA, size) if size else (_TRAILER, 0)
        if state == _DATA_END:
            if text:
                self.fault = "chunk data longer than its size"
            return _SIZE_LINE, 0
        if not text:
            return _DONE, 0
        if _FIELD.fullmatch(text) is None:
            self.fault = "a trailer line outside RFC 9112's grammar"
        return _TRAILER, 0
