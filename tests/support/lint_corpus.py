"""The labelled corpora of volatile values and how `prefixgate lint` is scored on them.

Each file under ``tests/fixtures/detect/corpus`` (adapted texts, ``SOURCES.md``) and under
``tests/fixtures/detect/real/<owner__name>/`` (real prompts, one folder per source repository,
its ``SOURCE.md`` naming the repository and its half) marks every cache-breaking span
``⟦like this⟧``. The real corpus is split by repository: :func:`half_of` (xxh64 of
``owner/name``, even → ``dev``, odd → ``test``); the detector is tuned on dev only.
:func:`score` removes the markers, lints each file as it would be linted in a project
(:mod:`analyzer.lint.bench.corpus`, rules PG001–PG009), maps every finding back to a span, and
counts:

- a finding is a **true** one when it overlaps a labelled span, **false** otherwise; a
  today-phrase (PG003) right before a labelled span only introduces it and counts as
  neither (one after which nothing is labelled is false);
- a labelled span is **found** when at least one true finding overlaps it.

precision = true / (true + false); recall = found / labelled spans. Run as a script
(``python -m tests.support.lint_corpus [adapted|dev|test]``) it prints both, with every miss and
false finding, except for the test half: its figures only.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from analyzer.lint.bench import corpus as scoring
from analyzer.lint.bench.corpus import CODES, HALVES, Labelled, Score, half_of, strip_marks
from tests.support import FIXTURES

__all__ = ["CODES", "CORPUS", "HALVES", "REAL", "Labelled", "Score", "corpus", "half_of", "real", "score"]
__all__ += ["sources", "strip_marks"]

CORPUS = FIXTURES / "detect" / "corpus"
REAL = FIXTURES / "detect" / "real"


def corpus() -> list[Labelled]:
    docs = []
    for path in sorted(CORPUS.iterdir()):
        if path.name == "SOURCES.md" or not path.is_file():
            continue
        text, spans = strip_marks(path.read_text(encoding="utf-8"))
        docs.append(Labelled(path.name, text, spans))
    return docs


def sources() -> list[scoring.Source]:
    return scoring.sources(REAL)


def real(half: str | None = None) -> list[Labelled]:
    """The real corpus's labelled files, of one half (by :func:`half_of`) or all."""
    return scoring.real(REAL, half)


def score(workdir: Path, docs: list[Labelled] | None = None) -> Score:
    return scoring.score_lint(workdir, docs or corpus())


def docs_of(which: str) -> list[Labelled]:
    """``adapted`` (tests/fixtures/detect/corpus), ``dev``, ``test`` or ``real`` (both halves)."""
    if which == "adapted":
        return corpus()
    return real(None if which == "real" else which)


def main(argv: list[str]) -> None:
    which = argv[0] if argv else "adapted"
    with tempfile.TemporaryDirectory() as tmp:
        s = score(Path(tmp), docs_of(which))
    print(
        f"{which}: labelled spans {s.labelled}, true findings {s.true}, false findings {len(s.false)}, missed spans {len(s.missed)}"
    )
    print(f"precision {s.precision:.3f}  recall {s.recall:.3f}  unreadable files {len(s.unreadable)}")
    if which in ("test", "real"):
        return  # the held-out half: figures only, never its findings
    for line in s.missed:
        print("  miss ", line)
    for line in s.false:
        print("  false", line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
