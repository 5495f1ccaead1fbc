"""One document as the rules see it: a prompt file or one request, its text units and the
volatile values found in each (detected once, shared by every rule).

This module runs no rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.detect import Volatile, find_volatile
from analyzer.lint.documents import Request, SourceFile, TextUnit, text_unit


@dataclass
class Doc:
    file: SourceFile
    request: Request | None
    units: list[TextUnit]
    vols: list[list[Volatile]] = field(default_factory=list)

    @classmethod
    def for_text(cls, src: SourceFile) -> "Doc":
        unit = text_unit(src)
        return cls(src, None, [unit], [find_volatile(unit.text)])

    @classmethod
    def for_request(cls, req: Request) -> "Doc":
        units = req.units()
        return cls(req.file, req, units, [find_volatile(u.text) for u in units])

    def static_after(self, unit_index: int, offset: int) -> int:
        """Bytes of cacheable content after ``offset`` of a unit (what a volatile value there un-caches)."""
        unit = self.units[unit_index]
        rest = len(unit.text[offset:].encode("utf-8"))
        if self.request is None or unit.segment is None:
            return rest
        segs = self.request.segments[unit.segment + 1 : self.request.boundary]
        return rest + sum(len(s.data) for s in segs)

    def prefix_bytes(self) -> int:
        if self.request is None:
            return len(self.file.text.encode("utf-8"))
        return sum(len(s.data) for s in self.request.segments[: self.request.boundary])
