"""Dates written in words or in CJK scripts, in any language of :mod:`.calendar`.

:func:`at_year` tries, at a four-digit year, a date written around it ("Donnerstag, 24. April
2025", "jueves, 24 de abril de 2025", "24 апреля 2025 г., четверг", "April 24, 2025", "24-Apr-2025"), only when
a month name stands among the words before it; :func:`cjk_at` a Chinese, Japanese or Korean date
at its digits ("2025年4月24日 星期四", "令和7年4月24日(木)", "2025년 4월 24일 목요일"), with the
clock time that may follow; :func:`weekday_at` a weekday name alone ("Donnerstag", "星期四").

It does NOT judge (:mod:`.judge`) and is called only where :mod:`.shapes` has an anchor.
"""

from __future__ import annotations

import re

from analyzer.detection import current_period
from analyzer.detection.calendar import ERAS, MONTH_NAMES, MONTH_WORDS, WEEKDAY_ABBR, WEEKDAY_NAMES
from analyzer.detection.candidate import HIGH, LOW, Candidate

_WD = "|".join(map(re.escape, WEEKDAY_NAMES))
_MON = "|".join(map(re.escape, MONTH_NAMES))
_WDA = "|".join(map(re.escape, sorted(set(WEEKDAY_ABBR), key=len, reverse=True)))
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
#: a year, Thai Buddhist-era ones (2550–2599, that is 2007–2056) too
_YEAR = r"(?:19\d\d|20\d\d|25[5-9]\d)(?!\d)"
_Y_TAIL = r"(?:\s*(?:г\.|г\b|года\b|р\.|року\b|roku\b|r\.|yılı\b))?"
_AFTER_WD = rf"(?:,?\s+(?:\({_WD}\)|(?:{_WD})\b))?"
NAMED = re.compile(
    rf"(?<![^\W\d_])(?:(?:(?:{_WD})\.?|(?:{_WDA})\.),?\s+(?:(?:der|den|le|el|il|lo|o|de|am)\s+)?)?"
    rf"(?:{_DAY}(?:st|nd|rd|th|er|º|ª|\.)?\s*(?:(?:de|of|del|di)\s+)?(?:{_MON})\.?,?\s*(?:(?:de|del|di)\s+|พ\.ศ\.\s*)?{_YEAR}{_Y_TAIL}"
    rf"|(?:{_MON})\.?\s+{_DAY}(?:st|nd|rd|th)?,?\s+{_YEAR}|{_DAY}-(?:{_MON})-{_YEAR}){_AFTER_WD}"
    rf"|{_YEAR}\.\s+(?:{_MON})\s+{_DAY}(?!\d)\.?(?:,?\s+(?:{_WD}))?",  # Hungarian: "2025. április 24., csütörtök"
    re.IGNORECASE,
)
#: a word, its combining marks in (Devanagari and Thai vowel signs are no letters to ``\w``)
_LETTERS = re.compile(r"(?:[^\W\d_]|[\u0900-\u097f\u0e31-\u0e4e])+")
#: Vietnamese: "thứ Năm, ngày 24 tháng 4 năm 2025"
VIETNAMESE = re.compile(
    rf"(?i)(?:(?:thứ\s+(?:hai|ba|tư|năm|sáu|bảy)|chủ\s+nhật),?\s+)?(?:ngày\s+)?{_DAY}\s+tháng\s+(?:0?[1-9]|1[0-2]),?"
    rf"\s+năm\s+{_YEAR}"
)

_CJK_WD = (
    r"(?:\s*[,，、]?\s*(?:[(（]\s*(?:星期|礼拜|周|週)?[一二三四五六日天月火水木金土](?:曜日?)?\s*[)）]"
    r"|(?:星期|礼拜)[一二三四五六日天]|[周週][一二三四五六日]|[月火水木金土日]曜日?))?"
)
_CJK_CLOCK = (
    r"(?:\s*(?:上午|下午|午前|午後|凌晨|早上|晚上|中午)?\s*"
    r"(?:\d{1,2}[:：][0-5]\d(?:[:：][0-5]\d)?|\d{1,2}\s*[时時点點]\s*(?:\d{1,2}\s*分)?(?:\s*\d{1,2}\s*秒)?))?"
)
CJK = re.compile(
    r"(?:(?:(?:令和|平成|昭和)\s*(?:\d{1,2}|元)|(?:19|20)\d\d)\s*年\s*)?(?:0?[1-9]|1[0-2])\s*月\s*"
    rf"(?:0?[1-9]|[12]\d|3[01])\s*[日号號]{_CJK_WD}(?P<clock>{_CJK_CLOCK})"
)
KOREAN = re.compile(
    r"(?:(?:19|20)\d\d\s*년\s*)?(?:0?[1-9]|1[0-2])\s*월\s*(?:0?[1-9]|[12]\d|3[01])\s*일"
    r"(?:\s*(?:[(（]\s*[월화수목금토일](?:요일)?\s*[)）]|[월화수목금토일]요일))?"
    r"(?P<clock>(?:\s*(?:오전|오후)?\s*\d{1,2}\s*시(?:\s*\d{1,2}\s*분)?(?:\s*\d{1,2}\s*초)?|\s*\d{1,2}:[0-5]\d(?::[0-5]\d)?)?)"
)
WEEKDAY = re.compile(
    rf"(?:(?:{_WD})\b|(?:星期|礼拜)[一二三四五六日天]|[周週][一二三四五六日]|[月火水木金土日]曜日?|[월화수목금토일]요일)",
    re.IGNORECASE,
)


def at_year(text: str, ys: int, ye: int, out: list[Candidate]) -> int:
    """A written-out date whose year is text[ys:ye]; returns where it ends (``ys`` when none)."""
    words = _LETTERS.findall(text, max(0, ys - 28), ys)
    line = text.rfind("\n", max(0, ys - 64), ys) + 1
    if any(w.lower() == "tháng" for w in words[-3:]) and (m := _around(VIETNAMESE, text, line, ys, ye)):
        out.append(Candidate("date", m.start(), m.end(), LOW, "text"))
        return m.end()
    after = _LETTERS.match(text, ye + 2) if text.startswith(". ", ye) else None  # "2025. április 24."
    if not any(w.lower().rstrip(".") in MONTH_WORDS for w in words[-3:]) and not (
        after and after.group(0).lower() in MONTH_WORDS
    ):
        return current_period.at_year(text, ys, ye, out)
    for m in NAMED.finditer(text, max(line, ys - 64), min(len(text), ye + 40)):
        if m.start() <= ys < m.end():
            out.append(Candidate("date", m.start(), m.end(), LOW, "text"))
            return m.end()
    return current_period.at_year(text, ys, ye, out)  # "Current month: April 2025"


def _around(rx: re.Pattern, text: str, line: int, ys: int, ye: int) -> re.Match | None:
    """A match of ``rx`` on the year's line that holds the year text[ys:ye]."""
    for m in rx.finditer(text, max(line, ys - 64), min(len(text), ye + 40)):
        if m.start() <= ys < m.end():
            return m
    return None


def cjk_at(text: str, s: int, out: list[Candidate]) -> int:
    """A CJK date starting at the digits text[s:] (or at the era name right before them)."""
    if text[max(0, s - 2) : s] in ERAS:
        s -= 2
    korean = "년" in text[s : s + 8] or "월" in text[s : s + 4]
    m = (KOREAN if korean else CJK).match(text, s)
    if not m:
        year = text[s : s + 4].isdigit() and text[s : s + 5].endswith(("年", "년"))
        return current_period.at_year(text, s, s + 4, out) if year else s  # "当前年份：2025年"
    if m.group("clock"):
        out.append(Candidate("time", s, m.end(), HIGH, "timestamp"))
    else:
        out.append(Candidate("date", s, m.end(), LOW, "cjk"))
    return m.end()


def weekday_at(text: str, at: int) -> int:
    """Where a weekday name starting at ``at`` ends, or ``at``."""
    m = WEEKDAY.match(text, at)
    return m.end() if m else at
