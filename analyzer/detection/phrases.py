"""English written dates and "today is" phrases, found at their words.

:func:`text_dates` finds written-out dates ("Nov 30, 2026", "Monday, 30 November 2026") at their
month names; :func:`today_phrases` the phrases that introduce the current date or time ("Today is",
"The current time is", "As of today,") and the weekday or written date right after one.

It does NOT judge (:mod:`.judge`); other languages' dates are :mod:`.dates`'.
"""

from __future__ import annotations

import re

from analyzer.detection import current_period, dates
from analyzer.detection.candidate import LOW, MEDIUM, Candidate

_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:day|sday|nesday|rsday|urday)?"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
TEXT_DATE = re.compile(
    rf"\b(?:{_WEEKDAY},?\s+)?(?:{_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?,?\s+\d{{4}}|{_DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+\d{{4}}|{_WEEKDAY},?\s+{_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?)\b"
)
WEEKDAY_ONLY = re.compile(rf"\b{_WEEKDAY}\b")
#: a leading class: sre skips to J F M A S O N D
_MONTH_RX = re.compile(r"[JFMASOND](?:an|eb|ar|pr|ay|un|ul|ug|ep|ct|ov|ec)")
TODAY = re.compile(
    r"(?i)\b(?:today(?:'s date)? is|today's date|(?:^|(?<=[\n*>#•(\[])|(?<=[\n*>#•\-][ \t]))today(?=(?:\*\*|__)?\s*[:：]|\s+\()|the (?:current )?(?:date|time|date and time|datetime) is|current (?:date|time|date and time|datetime|timestamp|day|weekday)(?: is)?\s*[:=]?|(?:it is|it's) now|as of today,?)(?:,?\s*(?:which|that) (?:is|was|will be)\b|\s*\((?:utc|gmt|local|[a-z]{2,5} time)\)(?: is\b)?)?"
)
TODAY_VALUE = re.compile(
    rf"(?i)(?:\*\*|__)?\s*[:=,(]?\s*(?:\d{{1,4}}[-/:.]\d|\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{4}}\b|{_WEEKDAY}\b|{_MONTH}\b|\{{|\$\{{|%\(|<%)"
)
_TODAY_KEYS = ("today", "current", "now", "date is", "time is")


def today_phrases(text: str, low: str, out: list[Candidate]) -> list[int]:
    """Appends the phrases and their values; returns where each "current" is (for
    :func:`.slots.user_values`: one scan for both; "current" overlaps no other of itself)."""
    seen: set[int] = set()
    current: list[int] = []
    e_is = _places(low, "e is")  # one scan for "date is" and "time is"
    for key in _TODAY_KEYS:
        at = (
            [k - 3 for k in e_is if k >= 3 and low.startswith(key, k - 3)]
            if key in _E_IS
            else _places(low, key)
        )
        for k in at:
            if key == "current":
                current.append(k)
            if not (k and low[k - 1].isalpha()) and _may_hold(text, low, key, k):
                for m in TODAY.finditer(text, max(0, k - 24), min(len(text), k + 48)):
                    if m.start() in seen or not (m.start() <= k < m.end()):
                        continue
                    value = TODAY_VALUE.match(text, m.end())
                    if value:
                        seen.add(m.start())
                        out.append(Candidate("today-phrase", *m.span(), MEDIUM))
                        _word_value(text, m.end(), out)
    return current


_E_IS = ("date is", "time is")


def _places(low: str, key: str) -> list[int]:
    """Where each ``key`` starts in ``low``, left to right, none overlapping the one before."""
    found = []
    k = low.find(key)
    while k >= 0:
        found.append(k)
        k = low.find(key, k + len(key))
    return found


def _may_hold(text: str, low: str, key: str, k: int) -> bool:
    """A :data:`TODAY` match can hold position ``k`` of ``key``: "current" only before " date" or
    " time", "now" only after "it is " / "it's " or "(" (its only alternatives with these words;
    read on lowered text where the window is ASCII, else always tried)."""
    if key not in ("current", "now") or not text[max(0, k - 24) : k + 48].isascii():
        return True
    if key == "current":
        return low.startswith((" date", " time", " day", " weekday"), k + 7)
    return (
        (k >= 6 and low.startswith("it is ", k - 6))
        or (k >= 5 and low.startswith("it's ", k - 5))
        or low[k - 1 : k] == "("
    )


def _word_value(text: str, at: int, out: list[Candidate]) -> None:
    """The weekday or written date right after a today-phrase ("Today is Monday")."""
    while at < len(text) and text[at] in " \t:=,(*_":
        at += 1
    m = TEXT_DATE.match(text, at) or WEEKDAY_ONLY.match(text, at)
    end = m.end() if m else dates.weekday_at(text, at)
    if end > at:
        out.append(Candidate("date", at, end, LOW, "after-today"))


#: the month names :data:`_MONTH_RX` finds that start a date (it finds "Jar", "Mec" … too)
MONTHS = _MONTHS = frozenset("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())


def month_starts(text: str) -> list[int]:
    """Where each month name of :data:`_MONTHS` starts, in order (:func:`.shapes.scan` finds them
    in its own pass and passes them to :func:`text_dates`)."""
    return [m.start() for m in _MONTH_RX.finditer(text) if m.group(0) in _MONTHS]


def text_dates(text: str, out: list[Candidate], months: list[int] | None = None) -> None:
    """Written-out dates ("Nov 30, 2026", "Monday, 30 November 2026"), anchored at their month
    name; ``months``: where the month names start (:func:`month_starts`, found here when None)."""
    seen = -1
    for k in month_starts(text) if months is None else months:
        if k < seen or (k and text[k - 1].isalpha()):
            continue
        for d in TEXT_DATE.finditer(text, max(0, k - 12), min(len(text), k + 29)):
            if d.start() <= k < d.end():
                out.append(Candidate("date", d.start(), d.end(), LOW, "text"))
                seen = d.end()
                break
        else:
            current_period.at_month(text, k, out)  # "Current month: November"
