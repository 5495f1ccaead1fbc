"""Rendered recall: how many labelled values the aggressive rewrite moves once a live app has rendered them.

``prefixgate bench rewrite --corpus`` reports head reuse, which the first value left in place decides;
this counts every value. Each text prompt of a half of the real corpus (the files the bench reads) is
rendered twice as the bench renders it (:func:`proxy.bench.rewrite_render.render` at each span), and a
value counts as moved when a span :func:`analyzer.rewrite.movable.movable` reports overlaps it (an
empty rendering counts as moved). Run as ``python -m tests.support.rendered_recall dev|test|adapted``;
it lists every value left in place, except for the test half: its figure only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from analyzer.lint.bench.corpus import half_of
from analyzer.rewrite.movable import clear_cache, movable
from proxy.bench.rewrite_corpus import prompts
from proxy.bench.rewrite_render import render
from tests.support.lint_corpus import CORPUS, REAL, sources


def folders(which: str) -> list[Path]:
    if which == "adapted":
        return [CORPUS]
    return [s.folder for s in sources() if half_of(s.split_repo) == which]


def rendered(between: list[str], spans: list[str], k: int) -> tuple[str, list[tuple[int, int, str]]]:
    """The ``k``-th rendering of a labelled prompt and each value's (start, end, value) in it."""
    text, at = [], 0
    placed = []
    for before, raw in zip(between, spans):
        value = render(raw, k, before)
        text += [before, value]
        at += len(before)
        placed.append((at, at + len(value), value))
        at += len(value)
    return "".join(text) + between[-1], placed


def measure(which: str) -> tuple[int, int, list[str]]:
    """(values, moved, one line per value left in place at the first rendering)."""
    total = moved = 0
    left: list[str] = []
    for folder in folders(which):
        base = REAL if which != "adapted" else folder
        for name, between, spans in prompts(folder):
            for k in (0, 1):
                text, placed = rendered(between, spans, k)
                clear_cache()
                found = movable(text)
                for (start, end, value), raw in zip(placed, spans):
                    total += 1
                    if start == end or any(s.start < end and s.end > start for s in found):
                        moved += 1
                    elif k == 0:
                        line = text[text.rfind("\n", 0, start) + 1 : start][-60:]
                        where = folder.relative_to(base) / name if which != "adapted" else Path(name)
                        left.append(f"{where}: {line!r} ⟦{value[:60]!r}⟧ (labelled {raw[:40]!r})")
    return total, moved, left


def main(argv: list[str]) -> None:
    which = argv[0] if argv else "dev"
    total, moved, left = measure(which)
    print(f"{which}: rendered values {total}, moved by aggressive {moved} ({moved / max(total, 1):.3f})")
    if which == "test":
        return  # the held-out half: its figure only
    for line in left:
        print("  left ", line)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
