"""A weekday alone after the words for "today" in other languages: "Heute ist Donnerstag.", "Hoy es
jueves", "Oggi è giovedì", "Сегодня четверг", "今天是星期四", "今日は木曜日", "오늘은 목요일" — the
current date, rendered per day (English "Today is Thursday" is :mod:`.phrases`').

:func:`find` looks at each "today" word (``str.find``; most languages' words only in a text that is not
ASCII) and reads a weekday of :data:`.calendar.WEEKDAY_NAMES` right after it, as a date
candidate of shape ``weekday-today`` (not after "if", nor a span of days: "Montag bis Freitag").

It does NOT read dates with a day and month (:mod:`.dates`), nor weekdays under other words.
"""

from __future__ import annotations

import re

from analyzer.detection.calendar import WEEKDAY_NAMES
from analyzer.detection.candidate import LOW, Candidate
from analyzer.detection.prefilters import find_led

#: the words looked for in any text (German, Spanish, Dutch and French are often written in ASCII alone) …
_ASCII_TODAY = ("heute", "hoy", "vandaag", "aujourd")
#: … and in a text that is not ASCII (each word a scan of the text: Italian, Portuguese, Polish, Turkish and
#: Indonesian prompts are seldom pure ASCII)
_OTHER_TODAY = ("oggi", "hoje", "dzisiaj", "bugün", "hari ini", "сегодня", "сьогодні", "今天", "今日", "오늘")
_OTHER_TODAY += ("本日", "dziś")
#: a word with a letter rare in prose, found by ``memchr`` to it (:func:`.prefilters.find_led`): its place
_RARE_LEAD = {"aujourd": 2}
#: the words after "today" up to the weekday ("ist", "es", "nous sommes", "是", "は")
_LEAD = re.compile(
    r"(?i)(?:[ \t]*(?:ist|es|è|é|is|jest|c'est|nous sommes|on est|adalah|是|は|은|는|—|-|:|：|,))*[ \t]*"
    r"(?:(?:der|el|le|il|o|a)[ \t]+)?"
)
_WEEKDAY = re.compile(r"(?i)(?:" + "|".join(re.escape(w) for w in WEEKDAY_NAMES) + r")(?![a-zà-ÿа-яіїє])")
#: a condition before "today" ("Wenn heute Montag ist", "si hoy es lunes", "如果今天是周一") or a span of
#: days after the weekday ("heute Montag bis Freitag"): no statement of today's date
_CONDITION = re.compile(
    r"(?i)\b(?:wenn|falls|ob|si|se|als|если|якщо|eğer|jika|jeśli|jeżeli)\b|如果|假如|もし|만약"
)
_SPAN_AFTER = re.compile(
    r"(?i)[ \t]*(?:bis|to|through|till|until|-|–|—|a|al|à|au|ao|до|по|至|到|~|から|부터)(?:[ \t]|$)"
)


def find(text: str, low: str, out: list[Candidate]) -> None:
    """The weekday right after each "today" word (see the module docstring)."""
    words = _ASCII_TODAY if text.isascii() else _ASCII_TODAY + _OTHER_TODAY
    for word in words:
        lead = _RARE_LEAD.get(word, -1)
        k = low.find(word) if lead < 0 else find_led(low, word, lead)
        while k >= 0:
            end = k + len(word)
            if word == "aujourd":
                end = low.find(" ", end, end + 6) if low.startswith("'hui", end) else -1
            if end > 0 and not (k and low[k - 1].isalpha() and word.isascii()):
                at = _LEAD.match(text, end).end()
                m = _WEEKDAY.match(text, at)
                ls = text.rfind("\n", 0, k) + 1
                if (
                    m
                    and at > end - (not word.isascii())
                    and not _CONDITION.search(text, max(ls, k - 40), k)
                    and not _SPAN_AFTER.match(text, m.end())
                ):
                    out.append(
                        Candidate("date", m.start(), m.end(), LOW, "weekday-today", text[k:at].strip())
                    )
            k = low.find(word, k + len(word)) if lead < 0 else find_led(low, word, lead, start=k + len(word))
