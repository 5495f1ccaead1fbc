"""Stop strings for streamed text: hold back text that might be the start of a stop string.

``StopMatcher.feed(piece)`` returns the text that is safe to emit; once a stop string appears, the text
before it is emitted and ``stopped`` turns true. ``flush()`` releases what was held back at the end.
It works on decoded text only; stop *tokens* are handled by the generation loop.
"""

from __future__ import annotations


class StopMatcher:
    def __init__(self, stops: list[str]):
        self.stops = [s for s in stops if s]
        self.buffer = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        if self.stopped:
            return ""
        self.buffer += piece
        hits = [i for i in (self.buffer.find(s) for s in self.stops) if i >= 0]
        if hits:
            self.stopped = True
            out, self.buffer = self.buffer[: min(hits)], ""
            return out
        hold = self._held_suffix()
        out = self.buffer[: len(self.buffer) - hold]
        self.buffer = self.buffer[len(self.buffer) - hold :]
        return out

    def _held_suffix(self) -> int:
        best = 0
        for stop in self.stops:
            for size in range(min(len(stop) - 1, len(self.buffer)), best, -1):
                if self.buffer.endswith(stop[:size]):
                    best = size
                    break
        return best

    def flush(self) -> str:
        out, self.buffer = ("" if self.stopped else self.buffer), ""
        return out
