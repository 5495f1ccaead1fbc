"""A file's text with its tree-sitter tree: node source, byte → character offsets, a walk.

Shared by the tree-sitter readers (:mod:`.compiled`). It does NOT choose a grammar or read nodes' meaning.
"""

from __future__ import annotations

import bisect
import time

#: how long tree-sitter may take on one file: its error recovery can take minutes on a broken one
PARSE_SECONDS = 2.0


def _parse(parser, data: bytes):
    """``parser.parse(data)``, given up after :data:`PARSE_SECONDS` (:class:`TimeoutError`: the caller
    reads the file as text, or reports it)."""
    deadline = time.monotonic() + PARSE_SECONDS
    try:
        return parser.parse(
            lambda at, _point: data[at : at + 65536], progress_callback=lambda *_: time.monotonic() > deadline
        )
    except ValueError:  # "Parsing failed": the callback stopped it
        raise TimeoutError(f"tree-sitter gave up after {PARSE_SECONDS:g} s") from None


class TreeText:
    def __init__(self, text: str, parser) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = _parse(parser, self.data)
        self._byte_starts: list[int] | None = None

    @staticmethod
    def walk(node):
        stack = [node]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))

    def char(self, byte: int) -> int:
        """The character offset of a byte offset of the file."""
        if self.text.isascii():
            return byte
        if self._byte_starts is None:
            starts, at = [], 0
            for ch in self.text:
                starts.append(at)
                at += len(ch.encode("utf-8"))
            starts.append(at)
            self._byte_starts = starts
        return bisect.bisect_left(self._byte_starts, byte)

    def src(self, node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def dotted(self, node) -> str:
        """A callee or member chain as one dotted name: ``chrono::Utc::now`` → ``chrono.Utc.now``."""
        return "".join(self.src(node).split()).replace("::", ".").replace("?.", ".").replace("!!", "")
