"""Rendered dates that change with the request: a period counted back from today, the user's last
login, and a place right after a kept date.

:func:`places_after_dates` adds a candidate for a place right after a date or time ("Today is
Thursday, 24 April 2025 in Istanbul."), kept by :mod:`.judge` only when that date was kept;
:func:`week_numbers` the month and week numbers of a heading over such a period ("4월 4주차").
:func:`period_bound` and :func:`user_event` tell :mod:`.judge` that a rendered date is a bound of
a period counted back from today ("수집 기간: … - … (지난 주)"), or the user's last login.

:data:`DATE_TIME_JOINS`: the words, in several languages, that join a kept date to its time
("06/06/2025 às 10:12", "…, es ist 13:52"); :data:`TIME_AFTER`: a clock time right after a date,
joined by the tighter few of them; :func:`after_time`, :func:`after_date` and
:func:`restated` tell that a value goes with the kept one right before it.

It does NOT find the dates themselves (:mod:`.shapes`, :mod:`.dates`) nor labelled values
(:mod:`.rendered`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from analyzer.detection.calendar import WEEKDAY_OF
from analyzer.detection.candidate import HIGH, Candidate

#: the words that join a date to its time ("at", "às", "a las", "um", "à", "alle", "om", "kl.", "в", "lúc" …)
#: and the clauses that go on to it ("24.04.2025, es ist 13:52", "24/04/2025 et il est 13h52")
DATE_TIME_JOINS = frozenset(
    ";at;@;t;-;|;às;as;a las;a la;à;um;alle;om;kl.;kl;klo;o;o godz.;godz.;в;saat;pukul;jam;lúc;v;ve;kello"
    ";klockan;it is;and it is;es ist;il est;et il est;son las;y son las;sono le;ore;alle ore;alle;time".split(
        ";"
    )
)
TIME_AFTER = re.compile(
    r"(?i)[ \t]?(?:,|at|@|-|às|a las|um|à|alle|om|kl\.?|klo|в|pukul|lúc)?[ \t]?(?:[01]?\d|2[0-3]):[0-5]\d"
)

_PLACE_AFTER = re.compile(r"[ \t]+in[ \t]+(?P<p>[A-Z][\w'’-]+(?:[ -][A-Z][\w'’-]+){0,2})(?=[.,;)!]|[ \t]*$)")
_LONGEST_DATE = 80  # characters: the dates of a range are looked for this close, by bisection
_NEAR = 160  # how far along its line a range's period words are looked for
#: a range separator between two dates
_RANGE = re.compile(r"[ \t]*(?:-|–|—|~|〜|to|until|bis|au|al|a|至|到|부터|から)[ \t]*$")
_RANGE_AFTER = re.compile(r"[ \t]*(?:-|–|—|~|〜|to|until|bis|au|al|a|至|到|부터|から)[ \t]*\S")
_USER_EVENT = re.compile(
    r"(?i)\b(?:last[ _-]?(?:login|log-in|logged in|seen|active|activity|visit|sign[ _-]?in)|member since|"
    r"joined|signed up|ostatnie logowanie|letzte anmeldung|dernière connexion|último acceso|ultimo accesso)\W{0,4}$"
)
_PERIOD = re.compile(
    r"(?i)\b(?:last|past|previous|this|current)\s+(?:\d+\s+)?(?:weeks?|months?|quarters?|years?|days)\b"
    r"|\b(?:letzte[nr]?|vergangene[nr]?|diese[rn]?)\s+(?:woche|monat)|semaine derni[eè]re|cette semaine"
    r"|mois dernier|semana pasada|esta semana|mes pasado|지난\s?(?:주|달)|이번\s?(?:주|달)|최근\s?\d+\s?일"
    r"|上周|本周|上个?月|本月|上星期|本星期|(?:近|过去)\d+天|先週|今週|先月|今月"
)
#: a month or week number in the words of a heading over a period: "4월 4주차", "第17周", "week 17"
_WEEK_NUMBER = re.compile(
    r"(?<!\d)(?P<m>\d{1,2})(?=월)|(?<!\d)(?P<w>\d{1,2})(?=주차)|(?i:\bweek[ \t]+)(?P<e>\d{1,2})\b"
)


def _start(span: tuple[int, int]) -> int:
    return span[0]


def find(text: str, out: list[Candidate]) -> None:
    """The finders below, after the dates are in ``out``."""
    places_after_dates(text, out)
    weekdays_after_dates(text, out)
    week_numbers(text, out)


#: the word right after a date ("2024-08-21 星期三", "14.07.2025 (Monday)", "2025-04-24, Thu"), looked up
#: in :data:`.calendar.WEEKDAY_OF` (a dict, not an alternation of every name)
_WORD_AFTER = re.compile(r"[ \t]*(?:,[ \t]*|[(（][ \t]*)?(?P<w>[^\W\d_]+(?:-feira)?)")


def _not_a_weekday(text: str, raw: str, end: int) -> bool:
    """A word spelled like a weekday that is not one here: a lower-case abbreviation ("sat down"),
    Indonesian "minggu ini" (this week)."""
    return (len(raw) <= 3 and raw.islower()) or (raw.lower() == "minggu" and text.startswith(" ini", end))


def weekdays_after_dates(text: str, out: list[Candidate]) -> None:
    """A weekday name right after a date: a candidate of shape ``weekday``, kept only right after a
    kept date (:func:`weekday_of_kept`). A CJK weekday runs on into the next word ("星期三可用"):
    its first three or two characters are looked up."""
    for end in sorted({c.end for c in out if c.kind in ("date", "time")}):
        m = _WORD_AFTER.match(text, end)
        if not m:
            continue
        raw, at = m.group("w"), m.start("w")
        word = raw.lower()
        n = len(word) if word in WEEKDAY_OF and not _not_a_weekday(text, raw, m.end("w")) else 0
        if not n and ("\u3040" <= raw[0] <= "\u9fff" or "\uac00" <= raw[0] <= "\ud7af"):
            n = next((k for k in (3, 2) if word[:k] in WEEKDAY_OF), 0)
        if n:
            out.append(Candidate("date", at, at + n, HIGH, "weekday"))


def places_after_dates(text: str, out: list[Candidate]) -> None:
    """A place right after a date or time ("… 24 April 2025 in Istanbul."): a candidate of shape
    ``place``, kept only after a kept date (:mod:`.judge`)."""
    for end in sorted({c.end for c in out if c.kind in ("date", "time")}):
        m = _PLACE_AFTER.match(text, end)
        if m:
            out.append(Candidate("state", m.start("p"), m.end("p"), HIGH, "place"))


def period_bound(text: str, start: int, end: int, dates: list[tuple[int, int]]) -> bool:
    """A date at text[start:end] is one end of a range of two dates on a line naming a period
    counted back from today ("수집 기간: … - … (지난 주)", "Last week (… to …)"); ``dates`` sorted by start."""
    near = dates[
        bisect_left(dates, start - 12 - _LONGEST_DATE, key=_start) : bisect_right(dates, end + 12, key=_start)
    ]
    paired = any(
        (start - 12 <= e <= start and _RANGE.fullmatch(text, e, start))
        or (end <= s <= end + 12 and _RANGE_AFTER.match(text, end) and _RANGE.fullmatch(text, end, s))
        for s, e in near
    )
    if not paired:  # the range first: the period's words are looked for only near a pair of dates
        return False
    ls = max(text.rfind("\n", max(0, start - _NEAR), start) + 1, start - _NEAR)
    le = text.find("\n", end, end + _NEAR)
    return bool(_PERIOD.search(text, ls, min(len(text), end + _NEAR) if le < 0 else le))


def week_numbers(text: str, out: list[Candidate]) -> None:
    """The month and week numbers of a heading naming a period counted back from today
    ("## 지난 주 정리: 4월 4주차"), found only on lines :func:`period_bound` already read."""
    starts = sorted({c.start for c in out if c.kind == "date"})
    line_of, ls, prev = {}, 0, 0  # each date's line start, read once left to right
    for at in starts:
        nl = text.rfind("\n", prev, at)
        ls, prev = (nl + 1 if nl >= 0 else ls), at
        line_of[at] = ls
    found: dict[int, list[Candidate]] = {}  # a heading line's candidates, read once a line
    for ls, le in {(line_of[c.start], c.start) for c in out if c.kind == "date"}:
        if text[ls : ls + 1] != "#":
            continue
        if ls not in found:
            le = text.find("\n", le)
            le = len(text) if le < 0 else le
            found[ls] = []
            if _PERIOD.search(text, ls, le):
                for m in _WEEK_NUMBER.finditer(text, ls, le):
                    g = next(x for x in ("m", "w", "e") if m.group(x))
                    found[ls].append(Candidate("state", *m.span(g), HIGH, "period"))
        out.extend(found[ls])


def user_event(label: str) -> bool:
    """The label names an event of the user's account ("Last login:", "Member since"): per user."""
    return bool(_USER_EVENT.search(label))


def after_time(text: str, k: Candidate | None, c: Candidate) -> bool:
    """``c`` (a date) follows the kept clock time ``k`` ("14:05, 24 April 2025", "14:05 on …")."""
    if not (k and k.kind == "time" and k.shape in ("clock", "seconds")):
        return False
    gap = text[k.end : c.start]
    return len(gap) <= 5 and "\n" not in gap and gap.strip(" ,") in ("", "on", "-")


def after_date(text: str, k: Candidate | None, c: Candidate) -> bool:
    """``c`` (a time) follows the kept date ``k``, joined by a word of :data:`DATE_TIME_JOINS`."""
    if not (k and k.kind == "date"):
        return False
    gap = text[k.end : c.start]
    return len(gap) <= 14 and "\n" not in gap and gap.strip(" ,()").lower() in DATE_TIME_JOINS


def restated(text: str, k: Candidate | None, c: Candidate) -> bool:
    """``c`` restates the kept date or time ``k`` in brackets right after it ("2025-07-14 (Jul 14, 2025)")."""
    return bool(
        k
        and k.kind in ("date", "time")
        and text[k.end : c.start] in (" (", "(")
        and text[c.end : c.end + 1] == ")"
    )


def weekday_of_kept(text: str, k: Candidate | None, c: Candidate) -> bool:
    """``c`` (a ``weekday`` candidate) names the day of the kept date ``k`` right before it."""
    return bool(
        k and k.kind in ("date", "time") and k.end <= c.start and not text[k.end : c.start].strip(" \t,(（")
    )
