"""A bare "Date:" or "Time:" item that belongs to something listed: an event, or a record.

:func:`listed_event` — under lines that name an event ("Free Webinar …", "Workshop:"), up to three
lines back within its paragraph, the item is the event's moment. :func:`record_field` — beside two or
more of a record's own fields ("ID:", "Title:", "URL:", "Author:" …) in its paragraph, it is that
record's date: a search result, an article, a ticket shown as content, not today's. :func:`in_range`
— a clock time that is one end of a schedule's range ("09:00-17:00", "9:00〜18:00").

It does NOT judge (:mod:`.judge` drops what these say is another moment's).
"""

from __future__ import annotations

import re

from analyzer.detection import regions

_WORD = re.compile(r"[a-z]+")
#: a bare moment label on its own list line ("- Date:", "2. **Time:**", "Tanggal:", "Fecha:")
_BARE_MOMENT = re.compile(
    r"(?i)[ \t>*+-]*(?:\d+[.)][ \t]*)?\**[ \t]*(?:date|time|when|date and time|datum|fecha|data|tanggal|waktu"
    r"|hora|heure|ora|zeit|uhrzeit|日期|时间|時間|日時)[ \t]*\**[ \t]*[:：][ \t]*\**[ \t]*$"
)
#: what names an event in the lines above such a label ("Free Webinar …", "Workshop: …")
_LISTED_EVENT = frozenset(
    "webinar webinars workshop workshops seminar seminars event events conference conferences concert concerts "
    "lecture lectures meetup meetups festival exhibition tournament premiere screening hackathon acara kegiatan "
    "veranstaltung evento eventos événement".split()
)
_LISTED_EVENT_LINES = 3
#: a record's own field, as a line's key ("ID: 92351", "- **Title:** …", "URL: https://…")
_RECORD_KEY = re.compile(
    r"(?i)[ \t>*+-]*\**[ \t]*(id|title|url|link|source|author|authors|category|categories|tags|metadata|subject"
    r"|from|snippet|publisher|doi|score|headline|标题|链接|来源|作者|タイトル)[ \t]*\**[ \t]*[:：]"
)
_RECORD_LINES = 6
#: a schedule's range ("09:00-17:00", "9:00〜18:00", "14:00 bis 16:00"): opening hours, not the clock
RANGE_AFTER = re.compile(r"\s*(?:-|–|—|~|〜|～|至|到|to|until|till|bis|à)\s*\d{1,2}[:.]\d{2}")
RANGE_BEFORE = re.compile(
    r"\d{1,2}[:.]\d{2}\s*(?:[AaPp]\.?[Mm]\.?\s*)?(?:-|–|—|~|〜|～|至|到|to|until|till|bis|à)\s*$"
)


#: "between 08:00 and 18:00", "zwischen 9:00 und 17:00", "entre 9:00 et 17:00", "entre las 9:00 y las 17:00"
_BETWEEN = re.compile(
    r"(?i)\b(?:between|zwischen|entre(?:\s+las)?|tra)\s+\d{1,2}[:.]\d{2}\s*(?:[AaPp]\.?[Mm]\.?\s*)?"
    r"(?:and|und|et|y|e)\s+(?:las\s+)?\d{1,2}[:.]\d{2}"
)


def in_range(text: str, start: int, end: int) -> bool:
    """The clock time text[start:end] is one end of a schedule's range ("09:00-17:00", "between 08:00
    and 18:00")."""
    if RANGE_AFTER.match(text, end) or RANGE_BEFORE.search(text, max(0, start - 16), start):
        return True
    m = _BETWEEN.search(text, max(0, start - 40), min(len(text), end + 24))
    return m is not None and m.start() <= start and end <= m.end()


def bare_moment(text: str, at: int) -> int:
    """Where the line of a bare moment label ending at ``at`` starts, or -1 when it is not one."""
    start = text.rfind("\n", 0, at) + 1
    return start if at - start <= 40 and _BARE_MOMENT.match(text, start, at) else -1


def listed_event(text: str, start: int) -> bool:
    """Lines above the label's line (at ``start``) name an event, within its paragraph."""
    for _ in range(_LISTED_EVENT_LINES):
        if start == 0:
            return False
        above = text.rfind("\n", 0, start - 1) + 1
        line = text[above : start - 1].lower()
        if not line.strip():
            return False
        if regions.title_like(line) and any(w in _LISTED_EVENT for w in _WORD.findall(line)):
            return True
        start = above
    return False


def record_field(text: str, start: int) -> bool:
    """Two or more lines of the label's paragraph (six up or down) are a record's own fields."""
    keys: set[str] = set()
    for step in (-1, 1):
        ls = start
        for _ in range(_RECORD_LINES):
            if step < 0:
                if ls == 0:
                    break
                ls = text.rfind("\n", 0, ls - 1) + 1
            else:
                nl = text.find("\n", ls)
                if nl < 0:
                    break
                ls = nl + 1
            le = text.find("\n", ls)
            line = text[ls : len(text) if le < 0 else le]
            if not line.strip():
                break
            m = _RECORD_KEY.match(line)
            if m:
                keys.add(m.group(1).lower())
    return len(keys) >= 2
