"""The current year or month rendered under a label that says so: "The current year is 2025",
"Current month: April 2025", "当前年份：2025年", "Aktuelles Jahr: 2025".

:func:`at_year` adds a ``date`` candidate of shape ``current-period`` for a year (or a month and
its year) right after such a label (English, German, French, Spanish, Portuguese, Italian, Russian, Chinese,
Japanese, Korean); :mod:`.judge` keeps it unless it sits in an example. LABELS.md counts the
current year or month as the date.

:func:`at_month` reads an English month name alone under a label of the current month ("Current
month: November", "The current month is November").

It does NOT read a year alone ("since 2025", "© 2025"), nor a month of a period
(:mod:`.rendered_dates`); :mod:`.dates` calls it at each year it reads no date at, and
:mod:`.phrases` at each month name it reads no date at.
"""

from __future__ import annotations

import re

from analyzer.detection.calendar import MONTH_NAMES
from analyzer.detection.candidate import HIGH, Candidate
from analyzer.detection.prefilters import holds_any

_LABEL = (
    r"(?:the\s+)?current\s+(?:year|month)(?:\s+is)?|this\s+(?:year|month)\s+is"
    r"|it\s+is\s+currently(?:\s+the\s+year)?|we are\s+(?:currently\s+in(?:\s+the\s+year)?|in\s+the\s+year)"
    r"|(?:it\s+is|it['’]s)\s+now(?:\s+the\s+year)?|(?:the\s+)?year\s+is\s+now|we(?:\s+are|['’]re)\s+(?:now\s+)?in"
    r"|aktuelles\s+jahr|aktueller\s+monat|(?:das\s+)?jahr\s+ist|année\s+en\s+cours|mois\s+en\s+cours|nous sommes\s+en"
    r"|año\s+actual|mes\s+actual|estamos\s+en|ano\s+atual|mês\s+atual|anno\s+(?:corrente|attuale)|mese\s+corrente"
    r"|текущий\s+(?:год|месяц)|сейчас\s+идёт|当前年份|当前月份|今年是|今年は|本月是|올해는|이번\s?달은"
)
_MONTH = "|".join(map(re.escape, MONTH_NAMES))
#: such a label right before the year, with the month name that may stand between
_BEFORE = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_LABEL})[ \t]*(?:\*\*|__)?[ \t]*[:：=]?[ \t]*\**[ \t]*(?P<m>(?:{_MONTH})\.?\s+)?\Z"
)
_REACH = 48
_CJK_MONTH = re.compile(r"[ \t]*(?:0?[1-9]|1[0-2])[ \t]*[月월]")
#: a word each label holds ("current year" holds "year" …), for a look before the regex
_WORDS = tuple(
    "year;month;currently;we are;we're;we’re;now;jahr;monat;année;mois;nous sommes;año;mes;estamos;ano;mês".split(
        ";"
    )
)
_WORDS += tuple("anno mese текущий сейчас 当前 今年 本月 올해 이번".split())


def at_year(text: str, ys: int, ye: int, out: list[Candidate]) -> int:
    """The year at text[ys:ye] (with a month name before it, a 年 after) under a label of the
    current year or month; returns where it ends (``ys`` when none)."""
    window = text[max(0, ys - _REACH) : ys]
    if window.isascii() and not holds_any(window.lower(), _WORDS):  # lowered once, not once a word
        return ys  # each label holds one of these words (lowered ASCII is exact): the regex cannot match
    m = _BEFORE.search(text, max(0, ys - _REACH), ys)
    if not m:
        return ys
    end = ye + (text[ye : ye + 1] in ("年", "년"))
    month = _CJK_MONTH.match(text, end) if end > ye else None  # "当前月份：2025年4月", "2025년 4월"
    end = month.end() if month else end
    out.append(Candidate("date", m.start("m") if m.group("m") else ys, end, HIGH, "current-period"))
    return end


#: a label of the current month alone right before a month name
_MONTH_LABEL = re.compile(
    r"(?i)(?<![^\W\d_])(?:(?:the\s+)?current\s+month(?:\s+is)?|this\s+month\s+is|it\s+is\s+currently"
    r"|we\s+are\s+currently\s+in)[ \t]*(?:\*\*|__)?[ \t]*[:：=]?[ \t]*\**[ \t]*\Z"
)
_ENGLISH_MONTH = re.compile(
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December)(?![^\W\d_])"
)


def at_month(text: str, k: int, out: list[Candidate]) -> None:
    """An English month name at text[k] with no day or year, under a label of the current month."""
    m = _ENGLISH_MONTH.match(text, k)
    window = text[max(0, k - _REACH) : k]
    if m and ("month" in window or "urrently" in window):
        if _MONTH_LABEL.search(window):
            out.append(Candidate("date", k, m.end(), HIGH, "current-period"))
