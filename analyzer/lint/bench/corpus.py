"""Labelled prompt corpora and how a detector is scored on them (lint, or any span finder).

Files mark each cache-breaking span ``⟦like this⟧`` (:func:`strip_marks`); a real corpus has one
folder per source repository with a ``SOURCE.md`` (``repo:``, ``half:``, a fork's ``fork_of:``) and is split by
repository (:func:`half_of`: xxh64 of ``owner/name``, even → dev, odd → test; a fork by its upstream). :func:`score_lint`
lints each file as a project would (rules PG001–PG009); :func:`score_spans` scores any finder of
(start, end) spans. A finding overlapping a labelled span is true, else false (a today-phrase right
before a span, or before a positional format slot with a labelled span soon after, is neither); a span is
found when a true finding overlaps it.

It does NOT choose a corpus or print anything (``prefixgate bench lint``, tests/support do).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from analyzer.lint.engine import run
from analyzer.lint.inputs import load

OPEN, CLOSE = "⟦", "⟧"
HALVES = ("dev", "test")
CODES = {f"PG00{i}" for i in range(1, 10)}


@dataclass
class Labelled:
    name: str
    text: str  # the file without markers
    spans: list[tuple[int, int]]


@dataclass
class Score:
    true: int = 0
    false: list[str] = field(default_factory=list)
    labelled: int = 0
    missed: list[str] = field(default_factory=list)
    neutral: int = 0
    #: files lint cannot read (an input error): no findings, every span missed
    unreadable: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.true / (self.true + len(self.false)) if self.true + len(self.false) else 1.0

    @property
    def recall(self) -> float:
        return (self.labelled - len(self.missed)) / self.labelled if self.labelled else 1.0


def strip_marks(raw: str) -> tuple[str, list[tuple[int, int]]]:
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    size = 0
    while True:
        i = raw.find(OPEN, at)
        if i < 0:
            out.append(raw[at:])
            break
        j = raw.find(CLOSE, i)
        assert j > i, f"unclosed {OPEN} at {i}"
        out.append(raw[at:i])
        size += i - at
        value = raw[i + 1 : j]
        assert OPEN not in value, f"nested {OPEN} at {i}"
        out.append(value)
        spans.append((size, size + len(value)))
        size += len(value)
        at = j + 1
    text = "".join(out)
    assert CLOSE not in text, "a closing marker without an opening one"
    return text, spans


def half_of(repo: str) -> str:
    """The half a source repository (``owner/name``) belongs to."""
    return HALVES[xxhash.xxh64_intdigest(repo.encode("utf-8")) % 2]


@dataclass
class Source:
    folder: Path
    repo: str
    #: what SOURCE.md says
    half: str
    #: file name → the labelled spans SOURCE.md announces
    counts: dict[str, int]
    #: the repository this one is a fork of (``fork_of:`` in SOURCE.md), or ""
    fork_of: str = ""

    @property
    def split_repo(self) -> str:
        """The repository that decides the half: a fork goes with its upstream (the same source)."""
        return self.fork_of or self.repo


_FIELD = re.compile(r"(?m)^(repo|half|fork_of):[ \t]*(\S+)")
_ROW = re.compile(r"(?m)^\|[ \t]*([^|\s][^|]*?)[ \t]*\|(?:[^|\n]*\|){3}[ \t]*(\d+)[ \t]*\|")


def sources(root: Path) -> list[Source]:
    """Every folder of a real corpus with its SOURCE.md read (repository, half, span counts)."""
    out = []
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        meta = folder / "SOURCE.md"
        if not folder.is_dir() or not meta.is_file():
            continue
        text = meta.read_text(encoding="utf-8")
        fields = dict(_FIELD.findall(text))
        counts = {name: int(n) for name, n in _ROW.findall(text) if name != "file"}
        out.append(
            Source(folder, fields.get("repo", ""), fields.get("half", ""), counts, fields.get("fork_of", ""))
        )
    return out


def real(root: Path, half: str | None = None) -> list[Labelled]:
    """A real corpus's labelled files, of one half (by :func:`half_of`) or all, each named
    ``owner__name/file``."""
    docs = []
    for src in sources(root):
        if half is not None and half_of(src.split_repo) != half:
            continue
        for path in sorted(src.folder.iterdir()):
            if path.name == "SOURCE.md" or not path.is_file():
                continue
            text, spans = strip_marks(path.read_text(encoding="utf-8"))
            docs.append(Labelled(f"{src.folder.name}/{path.name}", text, spans))
    return docs


#: a positional format slot ("%s", "{}", "{0}"): its argument, not the slot, is labelled, so a
#: today-phrase right before one introduces a labelled value too when one is labelled soon after
_POSITIONAL = re.compile(r"[ \t:：=]*(?:%[-+ #0-9.]*[sdvfq]|\{\d*(?::[^{}\n]*)?\})")


def _count(doc: Labelled, found: Iterable[tuple[int, int, str]], result: Score) -> None:
    hit = [False] * len(doc.spans)
    result.labelled += len(doc.spans)
    for start, end, what in found:
        hits = [k for k, (a, b) in enumerate(doc.spans) if a < max(end, start + 1) and start < b]
        line = doc.text.count("\n", 0, start) + 1
        where = f"{doc.name}:{line}: {what} {doc.text[start:end]!r}"
        if what == "PG003" and not hits:
            if any(0 <= a - end <= 6 for a, _ in doc.spans) or (
                _POSITIONAL.match(doc.text, end, end + 7) and any(0 <= a - end <= 300 for a, _ in doc.spans)
            ):
                result.neutral += 1
            else:
                result.false.append(where)
            continue
        if hits:
            result.true += 1
            for k in hits:
                hit[k] = True
        else:
            result.false.append(where)
    for (a, b), ok in zip(doc.spans, hit):
        if not ok:
            result.missed.append(f"{doc.name}:{doc.text.count(chr(10), 0, a) + 1}: {doc.text[a:b]!r}")


class Unreadable(ValueError):
    """Lint reports an input error for the file: it cannot read it."""


def lint_spans(workdir: Path, doc: Labelled) -> list[tuple[int, int, str]]:
    """(start, end, code) of each PG001–PG009 finding of ``doc`` linted as a file in ``workdir``."""
    path = workdir / doc.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc.text, encoding="utf-8")
    loaded = load([str(path)])
    if loaded.errors:
        raise Unreadable(f"{doc.name}: {loaded.errors}")
    starts = [0] + [i + 1 for i, ch in enumerate(doc.text) if ch == "\n"]
    out = []
    for f in run(loaded, CODES):
        start = starts[f.line - 1] + f.col - 1
        end = starts[f.end_line - 1] + f.end_col - 1 if f.end_line else start + 1
        out.append((start, end, f.code))
    return out


def score_lint(workdir: Path, docs: list[Labelled]) -> Score:
    """Each file linted and counted; one lint cannot read (an input error) counts with no findings."""
    result = Score()
    for doc in docs:
        try:
            found = lint_spans(workdir, doc)
        except Unreadable:  # only lint's input errors: a rule's failure still stops the score
            found = []
            result.unreadable.append(doc.name)
        _count(doc, found, result)
    return result


def score_spans(docs: list[Labelled], finder: Callable[[str], Iterable[tuple[int, int, str]]]) -> Score:
    """``finder(text)`` gives (start, end, what) per finding of one file's text."""
    result = Score()
    for doc in docs:
        _count(doc, finder(doc.text), result)
    return result
