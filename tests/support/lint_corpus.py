"""The labelled corpus of volatile values and how `prefixgate lint` is scored on it.

Each file under ``tests/fixtures/detect/corpus`` marks every cache-breaking span
``⟦like this⟧`` (``SOURCES.md`` there says what is labelled and where each text comes from).
:func:`score` removes the markers, lints each file as it would be linted in a project
(``analyzer.lint.inputs.load`` + ``analyzer.lint.engine.run``, rules PG001–PG008), maps every
finding's line and column back to a span, and counts:

- a finding is a **true** one when it overlaps a labelled span, **false** otherwise; a
  today-phrase (PG003) right before a labelled span only introduces it and counts as
  neither (one after which nothing is labelled is false);
- a labelled span is **found** when at least one true finding overlaps it.

precision = true / (true + false); recall = found / labelled spans. Run as a script
(``python -m tests.support.lint_corpus``) it prints both, with every miss and false finding.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from tests.support import FIXTURES

CORPUS = FIXTURES / "detect" / "corpus"
OPEN, CLOSE = "⟦", "⟧"
CODES = {f"PG00{i}" for i in range(1, 9)}


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


def corpus() -> list[Labelled]:
    docs = []
    for path in sorted(CORPUS.iterdir()):
        if path.name == "SOURCES.md" or not path.is_file():
            continue
        text, spans = strip_marks(path.read_text(encoding="utf-8"))
        docs.append(Labelled(path.name, text, spans))
    return docs


def _offset(starts: list[int], line: int, col: int) -> int:
    return starts[line - 1] + col - 1


def score(workdir: Path, docs: list[Labelled] | None = None) -> Score:
    result = Score()
    for doc in docs or corpus():
        path = workdir / doc.name
        path.write_text(doc.text, encoding="utf-8")
        loaded = load([str(path)])
        assert not loaded.errors, loaded.errors
        starts = [0] + [i + 1 for i, ch in enumerate(doc.text) if ch == "\n"]
        found = [False] * len(doc.spans)
        result.labelled += len(doc.spans)
        for f in run(loaded, CODES):
            start = _offset(starts, f.line, f.col)
            end = _offset(starts, f.end_line, f.end_col) if f.end_line else start + 1
            hits = [k for k, (a, b) in enumerate(doc.spans) if a < max(end, start + 1) and start < b]
            where = f"{doc.name}:{f.line}:{f.col}: {f.code} {doc.text[start:end]!r}"
            if f.code == "PG003" and not hits:
                if any(0 <= a - end <= 6 for a, _ in doc.spans):
                    result.neutral += 1
                else:
                    result.false.append(where)
                continue
            if hits:
                result.true += 1
                for k in hits:
                    found[k] = True
            else:
                result.false.append(where)
        for (a, b), ok in zip(doc.spans, found):
            if not ok:
                line = doc.text.count("\n", 0, a) + 1
                result.missed.append(f"{doc.name}:{line}: {doc.text[a:b]!r}")
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s = score(Path(tmp))
    print(
        f"labelled spans {s.labelled}, true findings {s.true}, false findings {len(s.false)}, missed spans {len(s.missed)}"
    )
    print(f"precision {s.precision:.3f}  recall {s.recall:.3f}")
    for line in s.missed:
        print("  miss ", line)
    for line in s.false:
        print("  false", line)


if __name__ == "__main__":
    sys.exit(main())
