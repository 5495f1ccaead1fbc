"""One prompt template found in code: literal pieces and interpolations, in order.

A :class:`Template` is built by a language module from a literal, f-string, template literal
or ``+`` chain; each :class:`Piece` is decoded literal text (with every character's file
offset) or an interpolation (source text, start, :class:`~analyzer.detection.names.Verdict`).
:func:`volatile_values` runs :func:`analyzer.detect.find_volatile` over the literal parts with
each interpolation as a neutral slot, and reports an interpolation volatile by name, call or label.

It does NOT parse code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.detect import Volatile, find_volatile
from analyzer.detection.context import MAX_LABEL, label, word_classes
from analyzer.detection.names import HIGH, Verdict, is_setting
from analyzer.detection.slotcontext import git_slot


@dataclass
class Piece:
    text: str
    #: literal: file offset of each character, then one past the last
    offsets: list[int] | None = None
    #: interpolation: file offset of its first character
    start: int = 0
    #: interpolation: why it is volatile, if it is
    verdict: Verdict | None = None

    @property
    def literal(self) -> bool:
        return self.offsets is not None

    def offset(self, i: int) -> int:
        if self.offsets is not None:
            return self.offsets[min(i, len(self.offsets) - 1)]
        return self.start + i


@dataclass
class Template:
    pieces: list[Piece] = field(default_factory=list)
    #: what the code calls it: a variable, key, keyword or function name
    name: str = ""

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)

    @property
    def literal_text(self) -> str:
        return "".join(p.text for p in self.pieces if p.literal)

    @property
    def interpolated(self) -> bool:
        return any(not p.literal for p in self.pieces)

    def file_offset(self, index: int) -> int:
        """File offset of character ``index`` of :attr:`text` (its end maps past the last piece)."""
        at = 0
        for p in self.pieces:
            if index < at + len(p.text):
                return p.offset(index - at)
            at += len(p.text)
        last = self.pieces[-1]
        return last.offset(len(last.text)) if last.literal else last.start + len(last.text)

    def file_end(self, index: int) -> int:
        """File offset just past character ``index - 1`` of :attr:`text` (where a value ending there ends)."""
        return self.file_offset(index - 1) + 1 if index > 0 else self.file_offset(0)


def _slot(n: int) -> str:
    """A neutral stand-in of the same length: a template slot with no volatile name."""
    return "{" + "_" * (n - 2) + "}" if n >= 2 else "_" * n


def judge_by_label(pieces: list[Piece]) -> None:
    """Give a verdict to an unjudged interpolation named for the working copy after a label about
    git ("The current branch is ${branch}."): its name alone says nothing, with its label it does."""
    before = ""
    for p in pieces:
        if p.literal:
            before = (before + p.text)[-MAX_LABEL:]
            continue
        if p.verdict is None and git_slot(p.text, label(before, len(before))):
            p.verdict = Verdict("a snapshot of the working copy, by its label", HIGH)
        before += p.text


def volatile_values(t: Template) -> list[Volatile]:
    text = t.text
    filled, slots, at = [], [], 0
    for p in t.pieces:
        if p.literal:
            filled.append(p.text)
        elif (
            p.verdict is None
            and is_setting(p.text)
            and "user" not in word_classes("".join(filled)[-MAX_LABEL:])
        ):
            filled.append("_" * len(p.text))  # `${timeZone}`: a setting, whatever its label
        else:
            filled.append(_slot(len(p.text)))
            slots.append((at, at + len(p.text), p))
        at += len(p.text)
    context = "description" if "description" in t.name.lower() else "prompt"
    found = find_volatile("".join(filled), context=context)
    by_span = {(v.start, v.end): v for v in found if v.kind == "placeholder"}
    out = []
    for a, b, p in slots:
        if p.verdict is not None:
            out.append(Volatile("placeholder", a, b, p.text, p.verdict.severity, p.verdict.reason))
        elif (a, b) in by_span:
            v = by_span[(a, b)]
            out.append(Volatile("placeholder", a, b, p.text, "high", v.reason))

    for v in found:
        if not any(a < v.end and v.start < b for a, b, _ in slots):
            out.append(Volatile(v.kind, v.start, v.end, text[v.start : v.end], v.severity, v.reason))
    return sorted(out, key=lambda v: v.start)
