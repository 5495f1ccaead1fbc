"""The words around one candidate value, each read only when a rule of :mod:`.judge` asks.

:class:`Around` gives the value, its label (the words before it on its line and sentence), the
label's last clause, the label's word classes (inline code left out), and whether the value is
static, around a fixed moment, labelled "now" or an example (its label, the words after it, an
"Example:" line above). :func:`short` shortens a label for a reason.

It does NOT decide anything (:mod:`.judge` does).
"""

from __future__ import annotations

import re
from functools import cached_property

from analyzer.detection import context as cx
from analyzer.detection import regions
from analyzer.detection.candidate import Candidate
from analyzer.detection.wording import SUPPOSED_AFTER

_EXAMPLE_AFTER = re.compile(
    r"(?i)^\W{0,3}(?:\(?e\.g\b|\(?example\b|\(?for example\b|\(?sample\b|\(?placeholder\b)"
)
#: words in inline code name code (`datetime_parser`), not the value after them
_INLINE_CODE = re.compile(r"`[^`\n]*`")
#: "sent before 2020-01-01"
_FIXED_MOMENT = frozenset("before after since until till from between by through".split())


def short(s: str, limit: int = 32) -> str:
    s = " ".join(s.split()).strip(" :=-,(")
    return s if len(s) <= limit else "…" + s[-(limit - 1) :]


class Around:
    """The words around one candidate, each read only when a rule asks for it."""

    def __init__(self, text: str, c: Candidate, floor: int, tags: regions.ExampleTags | None = None) -> None:
        self.text, self.c, self.floor, self.tags = text, c, floor, tags

    @cached_property
    def value(self) -> str:
        return self.text[self.c.start : self.c.end]

    @cached_property
    def label(self) -> str:
        return cx.label(self.text, self.c.start, self.floor)

    @cached_property
    def near(self) -> str:
        return cx.clause(self.label)

    @cached_property
    def labelled(self) -> str:
        return f"labelled `{short(self.label)}`"

    @cached_property
    def words(self) -> frozenset[str]:
        lab = _INLINE_CODE.sub(" ", self.label) if "`" in self.label else self.label
        classes = cx.word_classes(lab)
        last = self.label.split()[-1:]
        return classes | {"static"} if last and last[0].lower() in _FIXED_MOMENT else classes

    @property
    def static(self) -> bool:
        return "static" in self.words

    @property
    def around(self) -> bool:
        return "around" in self.words

    @property
    def now(self) -> bool:
        return "now" in self.words and "static" not in self.words

    @cached_property
    def example(self) -> bool:
        after = cx.after(self.text, self.c.end)
        return (
            "example" in self.words
            or bool(_EXAMPLE_AFTER.match(after))
            or (not after.isascii() and bool(SUPPOSED_AFTER.match(after)))
            or regions.in_example_block(self.text, self.c.start)
            or (self.tags is not None and self.c.start in self.tags)
        )
