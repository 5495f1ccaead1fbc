"""An incremental server-sent-events splitter that keeps every event's raw bytes.

:class:`SSEParser` returns the events complete so far, each with its exact bytes, ``event:``
name and joined ``data:`` lines; every ``raw`` plus :meth:`SSEParser.flush` gives back exactly
the bytes fed, which lets the relay drop one event and keep the rest byte-identical. Handles
``\\n``, ``\\r\\n`` and ``\\r`` line ends. It does not interpret payloads (:mod:`proxy.usage_tap`)
and never raises on malformed input: non-field lines are ignored, as the SSE spec says.
"""

from __future__ import annotations

from dataclasses import dataclass

_TERMINATORS = (b"\r\n\r\n", b"\n\n", b"\r\r")


@dataclass(frozen=True, slots=True)
class Event:
    raw: bytes
    event: str | None
    data: str


def parse_event(raw: bytes) -> Event:
    name: str | None = None
    data: list[str] = []
    for line in raw.splitlines():
        field, sep, value = line.partition(b":")
        if not sep or not field:
            continue  # a comment (": ping") or a line without a field
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value.decode("utf-8", "replace"))
        elif field == b"event":
            name = value.decode("utf-8", "replace")
    return Event(raw, name, "\n".join(data))


class SSEParser:
    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan_from = 0

    def _next_end(self) -> int:
        best = -1
        for term in _TERMINATORS:
            start = max(0, self._scan_from - len(term) + 1)
            i = self._buf.find(term, start)
            if i != -1 and (best == -1 or i + len(term) < best):
                best = i + len(term)
        return best

    def feed(self, chunk: bytes) -> list[Event]:
        self._buf += chunk
        events: list[Event] = []
        while True:
            end = self._next_end()
            if end == -1:
                self._scan_from = len(self._buf)
                return events
            events.append(parse_event(bytes(self._buf[:end])))
            del self._buf[:end]
            self._scan_from = 0

    def flush(self) -> bytes:
        """Bytes of an unterminated last event (the stream ended mid-event)."""
        rest = bytes(self._buf)
        self._buf.clear()
        self._scan_from = 0
        return rest
