"""The label words that can make a line's value rendered per request (:mod:`.rendered` reads a
line only where :func:`search` finds one before its colon or on its heading).

The words are a counter of the session (step, turn, …, a game's affinity or hp), the current user (user, Benutzer, 用户 …),
the weather or "you are in", each a whole word (an owner word may lead a longer one: "username").

It does NOT read the line (:mod:`.rendered` does).
"""

from __future__ import annotations

import re

from analyzer.detection.prefilters import led_by_first

#: the current user, in English, German, French, Spanish, Portuguese, Italian, Polish, Dutch,
#: Russian, Ukrainian, Turkish, Chinese, Japanese and Korean
OWNER = (
    r"user|users|visitor|customer|member|patient|player|caller|guest|benutzer[s]?|nutzer[s]?|kunde|kunden|utilisateur|usuario|"
    r"usuário|utente|cliente|u[żz]ytkownik(?:a|u)?|klient(?:a)?|gebruiker|klant|пользовател[ьяюе]|"
    r"kullanıcı|користувач[ауем]?|用户|使用者|ユーザー|사용자"
)
COUNTER = (
    r"step|steps|turn|turns|round|rounds|iteration|iterations|attempt|attempts|elapsed|requests|messages|queries|calls|credits|"
    r"schritt|runde|étape|tour|paso|turno|passo|krok|tura|stap|beurt|шаг|ход|步骤|轮次|回合|ステップ|ターン|단계|턴|"
    # a game's or a companion's standing, read each turn
    r"affinity|affection|favorability|hp|mana|stamina|好感度|亲密度|好感|体力|親密度"
)
WEATHER = "weather|wetter|météo|clima|tiempo|pogoda|погода|天气|天氣|天気|날씨"
#: the words, each word list grouped by its first character (:func:`.prefilters.led_by_first`: the same matches)
_BODY = (
    rf"(?:(?P<owner>{led_by_first(OWNER)})|(?P<counter>(?:{led_by_first(COUNTER)})(?![a-z]))"
    rf"|(?P<weather>{led_by_first(WEATHER)})|(?P<here>you are in|you're in))"
)
#: a word that no letter goes before
KEY = re.compile(r"(?<![a-zà-ÿ])" + _BODY)
#: :data:`KEY` with the non-letter before it matched, not looked behind at: sre then skips to such
#: a character at C speed (a pattern led by a lookbehind is tried at every place, ~40 ns each)
_LED_KEY = re.compile(r"[^a-zà-ÿ]" + _BODY)


def search(low: str, lo: int, hi: int) -> re.Match | None:
    """``KEY.search(low, lo, hi)``, whose word starts at ``key.start(key.lastindex)`` (the match may
    start one before it, at the non-letter). Exact: a lookbehind sees before ``lo`` too, so the
    leftmost word at ``p >= lo`` after a non-letter is the leftmost match of the led pattern from
    ``lo - 1``, the same alternative; at 0 (nothing before) the lookbehind form is searched."""
    return _LED_KEY.search(low, lo - 1, hi) if lo > 0 else KEY.search(low, lo, hi)
