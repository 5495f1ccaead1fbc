"""The words around one candidate value, each read only when a rule of :mod:`.judge` asks.

:class:`Around` gives the value, its label (the words before it on its line and sentence), the
label's last clause, the label's word classes (inline code left out), and whether the value is
static (or a bare "Date:" item of a listed event or record), around a fixed moment, labelled "now", an
event's moment ("Delivery date:"), a field of an API response or of an SQL row shown in the text,
after a conditional today-phrase, or an example (its label, the words after it, an "Example:" line
above, an "e.g." earlier in its sentence). :func:`short` shortens a label for a reason.

It does NOT decide anything (:mod:`.judge` does).
"""

from __future__ import annotations

import re

from analyzer.detection import context as cx
from analyzer.detection import foreign, glossary, listings, regions, sections
from analyzer.detection.candidate import Candidate
from analyzer.detection.prefilters import finds_any
from analyzer.detection.wording import SUPPOSED_AFTER

_EXAMPLE_AFTER = re.compile(
    r"(?i)^(?:\W{0,3}(?:\(?e\.g\b|\(?example\b|\(?for example\b|\(?sample\b|\(?placeholder\b)|['\"”’)]?[ \t]*(?:style|format)\b)"
)
#: words in inline code name code (`datetime_parser`), not the value after them
_INLINE_CODE = re.compile(r"`[^`\n]*`")
#: "sent before 2020-01-01"
_FIXED_MOMENT = frozenset("before after since until till from between by through".split())


_WORD = re.compile(r"[a-z]+(?:-(?:in|out|up|off)\b)?")
#: label classes that make a value the current one, the session's or the user's
_NOT_EVENT = frozenset(("now", "session", "user"))
#: "It is", "as of", "Today:" and the like end a label that means now without a now word
_NOW_TAIL = re.compile(r"(?i)\b(?:it is|it's|as of|is now|right now|at present)\W*$")


#: what an API response record holds beside its id and creation time
_RESPONSE = re.compile(
    r"chat\.completion|[\"']object[\"']\s*(?::|=>)\s*[\"'](?:response|message|list)[\"']|system_fingerprint"
    r"|[\"']finish_reason[\"']|[\"']stop_reason[\"']"
    # a streamed response's events (Anthropic's, OpenAI Responses'): one event per paragraph
    r"|\bcontent_block_start\b|\bmessage_start\b|[\"']response\.(?:created|output_item\.added|completed)[\"']"
)
_RESPONSE_REACH = 1000
#: a quoted field between others in a row of values, and the rest of a row that ends its statement or tuple
_ROW_BEFORE = re.compile(r"['\"],[ \t]*['\"]$")
_ROW_END = re.compile(r"['\"],[^\n]*\)[ \t]*[;,]?[ \t]*$")
#: how a record shows its fields: ``"id": "…``, ``"created": 17…``, ``'id' => '…``, ``// '…``
_RECORD_VALUE = re.compile(r"""(?:["']\s*(?::|=>)\s*["']?|//\s*["']?)$""")


#: "e.g." and its kin: what follows in the sentence illustrates
_EG = re.compile(r"(?i)\be\.g\.|\bfor example\b|\bfor instance\b|\bsuch as\b|\bi\.e\.")
_EG_REACH = 240
#: a literal each of :data:`_EG`'s alternatives holds, in lower, title and upper case ("E.g." holds ".g.")
_EG_WORDS = (".g.", ".G.", "xample", "XAMPLE", "nstance", "NSTANCE", "uch as", "UCH AS", ".e.", ".E.")
_RELATIVE_DAY = re.compile(r"(?i)\b(?:yesterday|tomorrow)\W{0,2}[ \t]+(?:is|was|will be)[ \t]+[\"'“]?$")
#: "Write the time as '14:30'": a quoted value after "as" shows a format
_QUOTED_AS = re.compile(r"(?i)\bas[ \t]+['\"“‘]$")


def _after_eg(text: str, at: int) -> bool:
    """An "e.g." earlier in the value's sentence, on its line and at most ``_EG_REACH`` back."""
    lo = max(text.rfind("\n", max(0, at - _EG_REACH), at) + 1, at - _EG_REACH)
    if not finds_any(text, lo, at, _EG_WORDS):
        return False  # none of the markers' words: no slice, no regex
    window = text[lo:at]
    ends = [m.end() for m in _EG.finditer(window)]
    return bool(ends) and cx.SENTENCE_END.search(window, ends[-1]) is None


#: a today-phrase as a clause's condition or object, introducing no value: "if today is Saturday",
#: "24 hours from the current time", "relative to today's date"
_PHRASE_OBJECT = re.compile(
    r"(?i)\b(?:if|when|whether|unless|suppose|assuming|from|since|until|before|after|than|to|relative to)"
    r"[ \t]+(?:the[ \t]+)?$"
)
#: a value after a conditional today-phrase: "if today is Saturday", "when the current date is …"
_CONDITIONAL_TODAY = re.compile(
    r"(?i)\b(?:if|when|whether|unless|suppose|assuming)[ \t]+(?:today|the current (?:date|day)|the date)"
    r"(?:'s date)?[ \t]+(?:is|was|falls on)[ \t]+$"
)
#: a condition word opening the clause a value ends, in several languages ("Se agora são", "如果现在是")
_HYPOTHETICAL = re.compile(
    r"(?i)(?:\b(?P<w>if|suppose|supposing|assuming|wenn|quand|cuando|quando|jika|kalau|eğer|se|si)\b"
    r"[^.,;:!?\n]{0,30}\Z|(?:如果|假如|假设|若是|もし|만약)[^。，,\n]{0,12}\Z)"
)
#: a literal of each of :data:`_CONDITIONAL_TODAY`'s first words, in lower, title and upper case
_CONDITIONS = ("f ", "F ") + tuple("hen HEN hether nless uppos ssum UPPOS SSUM NLESS HETHER".split())
#: … or followed by a new list item ("…the current time\n4. If the user …")
_LIST_ITEM_AFTER = re.compile(r"[ \t]*\n[ \t]*(?:\d+[.)]|[-*•])[ \t]+[A-Za-z]")


def _phrase_in_prose(text: str, c: Candidate) -> bool:
    return (
        _PHRASE_OBJECT.search(text, max(0, c.start - 24), c.start) is not None
        or _LIST_ITEM_AFTER.match(text, c.end - (text[c.end - 1 : c.end] == "\n")) is not None
    )


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
    "static" when it ends in a word that fixes a moment ("sent before"), without it when its last
    three words say "now" and none of them "static" (a fixed moment earlier in the sentence)."""
    lab = _INLINE_CODE.sub(" ", label) if "`" in label else label
    classes = cx.word_classes(lab)
    last = label.split()[-3:]
    if last and last[-1].lower() in _FIXED_MOMENT:
        return classes | {"static"}
    if (
        "static" in classes and "now" in classes
    ):  # "from the birth date until the current time": the nearest words say
        tail = cx.word_classes(" ".join(last))
        if "now" in tail and "static" not in tail:
            return classes - {"static"}
    return classes


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
        return "static" in self.words or self.listed_event

    @_once
    def listed_event(self) -> bool:
        """A bare "Date:" or "Time:" item of an event or a record listed around it (:mod:`.listings`)."""
        start = listings.bare_moment(self.text, self.c.start)
        return start >= 0 and (
            listings.listed_event(self.text, start) or listings.record_field(self.text, start)
        )

    @property
    def around(self) -> bool:
        return "around" in self.words

    @property
    def now(self) -> bool:
        return "now" in self.words and "static" not in self.words

    @_once
    def event(self) -> bool:
        """The label names an event's moment ("Delivery date:", "Concert:", "Posted on", "Hora de
        salida:"): one of :data:`.context.EVENT_NOUNS` (or :func:`.foreign.event`) and no "now",
        session or user word."""
        near = self.near
        low = near.lower()
        if foreign.event(low) or not near.isascii():
            return foreign.event(low)  # "Hora de salida:", "会议时间："
        return (
            any(w in cx.EVENT_NOUNS for w in _WORD.findall(low))
            and not self.words & _NOT_EVENT
            and not _NOW_TAIL.search(near)
        )

    @_once
    def response_field(self) -> bool:
        """The value is a field of an API response shown in the text (``"id": "chatcmpl-…"``,
        ``"created": 1731448405`` next to ``"object": "chat.completion"``): a record, not a prompt's."""
        text, at = self.text, self.c.start
        if not _RECORD_VALUE.search(text, max(0, at - 12), at):
            return False  # not a quoted value, a JSON field's or a code comment's
        lo = text.rfind("\n\n", max(0, at - _RESPONSE_REACH), at)
        hi = text.find("\n\n", at, at + _RESPONSE_REACH)
        lo, hi = (max(0, at - _RESPONSE_REACH) if lo < 0 else lo), (at + _RESPONSE_REACH if hi < 0 else hi)
        return _RESPONSE.search(text, lo, hi) is not None  # in the same paragraph (the record)

    @_once
    def row_field(self) -> bool:
        """The value is a quoted field of a row of values that ends its line (``…', '2025-03-05
        03:19:32', 'name', null);``): an SQL dump's record, not a prompt's."""
        text, at, end = self.text, self.c.start, self.c.end
        le = text.find("\n", end)
        return bool(
            _ROW_BEFORE.search(text, max(0, at - 6), at)
            and _ROW_END.match(text, end, len(text) if le < 0 else le)
        )

    @_once
    def conditional(self) -> bool:
        """The value follows a conditional today-phrase: "if today is Saturday"."""
        text, at = self.text, self.c.start
        lo = max(0, at - 48)
        if not finds_any(text, lo, at, _CONDITIONS):
            return False  # no condition word before it: the pattern cannot match
        return _CONDITIONAL_TODAY.search(text, lo, at) is not None

    @_once
    def hypothetical(self) -> bool:
        """The value is a condition's, not a reading: "Se agora são 15:26, …", "if the current time is
        14:00", "如果现在是14:00" (a condition word before it on its clause)."""
        text, at = self.text, self.c.start
        m = _HYPOTHETICAL.search(text, max(0, at - 40), at)
        if m is None or (m.group("w") or "").lower() not in ("se", "si"):
            return m is not None
        # "se" / "si" only opening a clause, not a pronoun ("Lembre-se que agora são", "si sono fatte")
        before = text[max(0, m.start() - 8) : m.start()].rstrip(" \t")
        return not before or not (before[-1].isalnum() or before[-1] == "-")

    @property
    def relative_day(self) -> bool:
        """Right after "yesterday is" / "tomorrow will be": the day resolved from today, even after an
        "e.g." (Le Chat's 'resolve dates (e.g. "yesterday" is Monday, March 3, 2025)')."""
        return _RELATIVE_DAY.search(self.text, max(0, self.c.start - 32), self.c.start) is not None

    @_once
    def example(self) -> bool:
        if self.relative_day:  # an "e.g." before it is the sentence's, not the value's: only a block or tag
            return regions.in_example_block(self.text, self.c.start, memo=self.memo) or bool(
                self.tags is not None and self.c.start in self.tags
            )
        after = cx.after(self.text, self.c.end)
        return (
            "example" in self.words
            or bool(_EXAMPLE_AFTER.match(after))
            or (not after.isascii() and bool(SUPPOSED_AFTER.match(after)))
            or regions.in_example_block(self.text, self.c.start, memo=self.memo)
            or _after_eg(self.text, self.c.start)
            or (
                self.c.kind in ("time", "date")
                and _QUOTED_AS.search(self.text, max(0, self.c.start - 8), self.c.start) is not None
            )
            or (self.c.kind == "today-phrase" and _phrase_in_prose(self.text, self.c))
            or self.conditional
            or (self.tags is not None and self.c.start in self.tags)
            or (
                self.c.kind != "placeholder"
                and sections.in_example_section(self.text, self.c.start, self.memo)
            )
            or (self.c.kind in ("time", "date") and glossary.restates_quote(self.text, self.c.start))
        )
