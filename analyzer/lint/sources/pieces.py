"""One prompt template found in code: literal pieces and interpolations, in order.

A :class:`Template` is built by a language module from a literal, f-string, template literal
or ``+`` chain; each :class:`Piece` is decoded literal text (with every character's file
offset) or an interpolation (source text, start, :class:`~analyzer.detection.names.Verdict`).
:func:`volatile_values` runs :func:`analyzer.detect.find_volatile` over the literal parts with
each interpolation as a neutral slot, and reports an interpolation volatile by name, call or label,
and the slots and today-phrases of the literal; a date or id written in it is fixed text.

It does NOT parse code.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from analyzer.detect import Volatile, find_volatile
from analyzer.detection.context import MAX_LABEL, label, word_classes
from analyzer.detection.names import HIGH, Verdict, is_setting
from analyzer.detection.slotcontext import (
    BOUND_REASON,
    content,
    git_slot,
    header_above,
    in_period,
    range_bound,
)
from analyzer.detection.slotreadings import labels_a_reading
from analyzer.lint.sources.promptlike import KEYED, is_prompt, slotted


@dataclass
class Piece:
    text: str
    #: literal: file offset of each character, then one past the last
    offsets: list[int] | None = None
    #: interpolation: file offset of its first character
    start: int = 0
    #: interpolation: why it is volatile, if it is
    verdict: Verdict | None = None
    #: a positional format slot (``%s``, ``{}``): the file span and text of the argument filling it,
    #: where a finding on the slot is reported (the slot itself names nothing)
    filled_by: tuple[int, int, str] | None = None

    @property
    def literal(self) -> bool:
        return self.offsets is not None

    def offset(self, i: int) -> int:
        if self.offsets is not None:
            return self.offsets[min(i, len(self.offsets) - 1)]
        if (
            self.filled_by is not None
        ):  # the slot's first character maps to the argument's start, the rest to its end
            return self.filled_by[0] if i == 0 else self.filled_by[1] - 1
        return self.start + i

    @property
    def shown(self) -> str:
        """What a finding on this piece quotes: the argument filling a positional slot, else the text."""
        return self.filled_by[2] if self.filled_by is not None else self.text


@dataclass
class Template:
    pieces: list[Piece] = field(default_factory=list)
    #: what the code calls it: a variable, key, keyword or function name
    name: str = ""
    #: characters its language keeps literal in its literal text (PHP and Ruby: a ``$`` there is no slot)
    plain: str = ""

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
        """File offset of character ``index`` of :attr:`text` (its end maps past the last piece); the
        pieces' starts are summed once (a template of thousands of pieces is read at each finding)."""
        cum = self.__dict__.get("_cum")
        if cum is None or cum[0] != len(self.pieces):
            starts, at = [], 0
            for p in self.pieces:
                starts.append(at)
                at += len(p.text)
            cum = self.__dict__["_cum"] = (len(self.pieces), starts, at)
        _, starts, total = cum
        if 0 <= index < total:
            i = bisect.bisect_right(starts, index) - 1
            return self.pieces[i].offset(index - starts[i])
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
        near = label(before, len(before)) or header_above(
            before + p.shown, len(before), len(before) + len(p.shown)
        )
        if p.verdict is None and git_slot(p.shown, near):  # the argument of a "%s"; under "Recent commits:"
            p.verdict = Verdict("a snapshot of the working copy, by its label", HIGH)
        before += p.text


def _keyed(pieces: list[Piece]) -> bool:
    """A volatile interpolation stands right after a key (``"zonedDateTime": "$now"``)."""
    before = ""
    for p in pieces:
        if p.literal:
            before = (before + p.text)[-MAX_LABEL:]
        elif p.verdict is not None and KEYED.search(before):
            return True
    return False


def prompt_template(
    pieces: list[Piece], name: str, skip: bool, *, slots_count: bool = False, joined: bool = False
) -> Template | None:
    """The template ``pieces`` make, labels judged (:func:`judge_by_label`), when it reads as a
    prompt; None when its context skips it, it is empty or it does not read as one. With
    ``slots_count``, a literal with template slots and no interpolation counts as a prompt too;
    ``joined``: the pieces are appended to a text that reads as a prompt (``p += `…```)."""
    t = Template([p for p in pieces if p.text], name)
    judge_by_label(t.pieces)
    if not t.pieces or skip:
        return None
    volatile = any(p.verdict for p in t.pieces if not p.literal)
    if joined or is_prompt(t.literal_text, name, t.interpolated, volatile, volatile and _keyed(t.pieces)):
        return t
    return t if slots_count and not t.interpolated and slotted(t.literal_text) else None


def _period_bound(text: str, at: int, p: Piece) -> bool:
    """``p`` names a period's bound on a line naming a period counted back from today ("the past 7
    days (since {sinceDate:…})"): per request, even where a fixed-moment word ("published") labels it."""
    return range_bound(p.text) and in_period(text, at, at + len(p.text))


def _static_label(text: str, at: int) -> bool:
    """The label right before ``text[at]`` fixes its moment (a cut-off, a release): no "now" word."""
    classes = word_classes(label(text, at))
    return "static" in classes and "now" not in classes


#: a literal ``$`` read as no sigil (a full-width dollar: the same length, no slot opens at it)
_PLAIN = str.maketrans("$", "\uff04")


def volatile_values(t: Template) -> list[Volatile]:
    text = t.text
    filled, slots, at = [], [], 0
    for p in t.pieces:
        if p.literal:
            filled.append(p.text.translate(_PLAIN) if t.plain else p.text)  # '$now' in PHP: the text itself
        elif p.verdict is None and content(p.text):
            filled.append(" " * len(p.text))  # `userMessage`: the request's content, whatever its label
        elif (
            p.verdict is None
            and is_setting(p.text)
            and not _period_bound(text, at, p)
            and "user" not in word_classes(before := "".join(filled)[-MAX_LABEL:])
            and not labels_a_reading(before)  # "Tokens left: ${s.budget - s.used}": read per request
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
    reported: set[tuple[int, int, str]] = set()  # "{0} … {0}": one argument, one finding
    for a, b, p in slots:
        if p.filled_by is not None:
            if p.filled_by in reported:
                continue
            reported.add(p.filled_by)
        if p.verdict is not None:
            bound = _period_bound(text, a, p)
            if _static_label(text, a) and not bound:
                continue  # "Knowledge cutoff: ${date.format(f)}": a fixed date, whatever the name says
            why = BOUND_REASON if bound else p.verdict.reason
            out.append(Volatile("placeholder", a, b, p.shown, "high" if bound else p.verdict.severity, why))
        elif (a, b) in by_span:
            v = by_span[(a, b)]
            out.append(Volatile("placeholder", a, b, p.shown, "high", v.reason))
        elif _period_bound(text, a, p):
            out.append(Volatile("placeholder", a, b, p.shown, "high", BOUND_REASON))
    flagged = {p.shown for a, _, p in slots if any(o.start == a for o in out)}
    for a, b, p in slots:  # the same expression again ("use the name ${name.split(' ')[0]}")
        if (
            p.filled_by is None
            and p.shown in flagged
            and len(p.shown) >= 3
            and not any(o.start == a for o in out)
        ):
            why = f"the same value as `{p.shown[:32]}` before"
            out.append(Volatile("placeholder", a, b, p.shown, "high", why))
    for v in found:
        if v.kind not in ("placeholder", "today-phrase"):
            continue  # a date, id or count written in the literal: the same text on every request
        if not any(a < v.end and v.start < b for a, b, _ in slots):
            out.append(Volatile(v.kind, v.start, v.end, text[v.start : v.end], v.severity, v.reason))
    return sorted(out, key=lambda v: v.start)


#: the words of a formatted value's own text (", ", " at ", " Jam "): a few at most, no sentence
_VALUE_WORDS = re.compile(r"[^\W\d_]{2,}")


#: … and no label of its own ("当前准确时间是：${t}"): the value comes with its wording, as prompt text
_LABELLED = re.compile(r"[^\W\d_]{2,}[ \t]*[:：]")


def folded(templates: list[Template]) -> list[Template]:
    """``templates`` less each formatted value declared once and interpolated whole in another
    (``stamp = `${p.day}-${p.month} Jam ${p.hour}```, then ``Current time: ${stamp}``): the value
    enters the prompt there, so that interpolation is the finding, with the value's reason."""
    named: dict[str, tuple[Template, Volatile]] = {}
    count: dict[str, int] = {}
    for t in templates:
        count[t.name] = count.get(t.name, 0) + 1
    for t in templates:
        if count[t.name] > 1:
            continue  # a name given to two texts (two functions' "stamp"): which one is meant is unknown
        text = t.literal_text
        if not t.name.isidentifier() or len(text) > 40 or len(_VALUE_WORDS.findall(text)) > 3:
            continue
        if not any(_LABELLED.search(p.text) for p in t.pieces if p.literal) and (found := volatile_values(t)):
            named[t.name] = (t, found[0])
    gone: set[int] = set()  # each text folds into the nearest template after it that interpolates it
    for t in sorted(templates, key=lambda t: t.file_offset(0)) if named else ():
        for p in t.pieces:
            inner, first = named.get(p.text.strip("${} \t"), (None, None)) if not p.literal else (None, None)
            if inner is None or inner is t or id(inner) in gone or inner.file_offset(0) > t.file_offset(0):
                continue
            gone.add(id(inner))
            if p.verdict is None:
                p.verdict = Verdict(f"`{inner.name}` holds a text that {_bare(first.reason)}", first.severity)
    return [t for t in templates if id(t) not in gone]


def _bare(reason: str) -> str:
    """A piece's reason as a clause: "calls `new Date()`" stays, "named `x`: …" keeps what follows."""
    return reason.split(": ", 1)[1] if reason.startswith("named ") and ": " in reason else reason
