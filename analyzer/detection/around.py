"""The words around one candidate value, each read only when a rule of :mod:`.judge` asks.

:class:`Around` gives the value, its label (the words before it on its line and sentence), the
label's last clause, the label's word classes (inline code left out), and whether the value is
static, around a fixed moment, labelled "now" or an example (its label, the words after it, an
"Example:" line above). :func:`short` shortens a label for a reason.

It does NOT decide anything (:mod:`.judge` does).
"""

from __future__ import annotations

import re

from analyzer.detection import context as cx
from analyzer.detection import glossary, regions
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


class _once:  # noqa: N801 — used as a decorator, like functools.cached_property
    """``functools.cached_property`` without the lock Python 3.11 takes on every first read: the
    value is computed once and stored in the instance, so later reads never reach this."""

    def __init__(self, fn) -> None:
        self.fn, self.name = fn, fn.__name__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


def _label_words(label: str) -> frozenset[str]:
    """The word classes of a label (:func:`.context.word_classes`, inline code left out), with
    "static" when it ends in a word that fixes a moment ("sent before")."""
    lab = _INLINE_CODE.sub(" ", label) if "`" in label else label
    classes = cx.word_classes(lab)
    last = label.split()[-1:]
    return classes | {"static"} if last and last[0].lower() in _FIXED_MOMENT else classes


class Around:
    """The words around one candidate, each read only when a rule asks for it."""

    def __init__(
        self,
        text: str,
        c: Candidate,
        floor: int,
        tags: regions.ExampleTags | None = None,
        memo: dict | None = None,
    ) -> None:
        self.text, self.c, self.floor, self.tags = text, c, floor, tags
        #: answers that depend only on the text and a label or line, shared by the values of one text
        self.memo = {} if memo is None else memo

    @_once
    def value(self) -> str:
        return self.text[self.c.start : self.c.end]

    @_once
    def label(self) -> str:
        return cx.label(self.text, self.c.start, self.floor)

    @_once
    def near(self) -> str:
        return cx.clause(self.label)

    @_once
    def labelled(self) -> str:
        return f"labelled `{short(self.label)}`"

    @_once
    def words(self) -> frozenset[str]:
        label = self.label
        got = self.memo.get(label)  # the label's own text is the key (other keys are tuples)
        if got is None:
            got = self.memo[label] = _label_words(label)
        return got

    @property
    def static(self) -> bool:
        return "static" in self.words

    @property
    def around(self) -> bool:
        return "around" in self.words

    @property
    def now(self) -> bool:
        return "now" in self.words and "static" not in self.words

    @_once
    def example(self) -> bool:
        after = cx.after(self.text, self.c.end)
        return (
            "example" in self.words
            or bool(_EXAMPLE_AFTER.match(after))
            or (not after.isascii() and bool(SUPPOSED_AFTER.match(after)))
            or regions.in_example_block(self.text, self.c.start, memo=self.memo)
            or (self.tags is not None and self.c.start in self.tags)
            or (self.c.kind in ("time", "date") and glossary.restates_quote(self.text, self.c.start))
        )
