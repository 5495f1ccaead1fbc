"""Where the user is now, rendered as plain text: the timezone they are in and the weather there.

:func:`zone` keeps a zone name after first-person or user wording (``my current timezone:
Europe/Warsaw``, ``I'm in Europe/Warsaw``, ``jestem w strefie czasowej …``) or on a key line of a
block about the user (``<user-preferences>`` … ``- Timezone: America/New_York``); a server's or a
deployment's zone is configuration. :func:`weather` keeps a reading with a temperature after a
``Weather:`` key ("Sunny, 18 °C"), to the end of its sentence. Both are called by
:mod:`.rendered` at label words its one pass found; neither scans the text. :func:`coordinates`
keeps a latitude, longitude pair under a label naming where ("Location: 52.5200, 13.4050"), called
by :mod:`.session` at a number's digits. :func:`user_place` keeps the place in "The user is in
Australia." (a fact, not "If the user is in …").
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate

_WEATHER_VALUE = re.compile(
    r"[^\n]{0,40}?-?\d{1,3}(?:[.,]\d)?[ \t]?°[ \t]?[CF]?|[^\n]{0,40}?\d{1,3}[ \t]?(?:degrees|grad)\b"
)
#: the colon after a key word ("Weather: …", "**Weather:** …", "Weather in Oslo right now: …")
_AFTER_KEY = re.compile(
    r"(?i)(?:[ \t]+(?:(?:in|for|at)[ \t]+[^\n:：*.,]{1,30}?)?(?:[ \t]*(?:right now|now|today|currently))?)?"
    r"[ \t]*(?:\*\*|__)?[ \t]*[:：](?:\*\*|__)?[ \t]*"
)
#: first-person or user wording before a timezone: "I'm in", "my current timezone:", "jestem w strefie"
_TZ_OWNER = re.compile(
    r"(?i)(?:\bi'?m in|\bi am in|\bmy\b[^\n.]{0,24}|\buser(?:'s)?\b[^\n.]{0,24}|\bjestem w\b[^\n.]{0,24}|"
    r"\bmoja\b[^\n.]{0,24}|\bużytkownika\b[^\n.]{0,24}|\bich bin in\b[^\n.]{0,24}|\bmeine?\b[^\n.]{0,24}|"
    r"\bje suis\b[^\n.]{0,24}|\bmon\b[^\n.]{0,24}|\bestoy en\b[^\n.]{0,24}|\bmi\b[^\n.]{0,24})\W{0,3}$"
)
#: wording that puts a slot at where the user is now: "The user is located in {city}", "the current location
#: is {x}", "You are currently in {city}" is the conversation's place (:mod:`.slotcontext` reads that)
_USER_AT = re.compile(
    r"(?i)(?:\b(?:the[ \t]+)?(?:user|customer|caller|visitor)[ \t]+(?:is|are)[ \t]+(?:currently[ \t]+|now[ \t]+)?"
    r"(?:located|based|living|staying|residing)[ \t]+(?:in|at|near)"
    r"|\b(?:user's|customer's|current)[ \t]+(?:location|city|country|whereabouts)(?:[ \t]+is|[ \t]*[:：])?)[ \t]*$"
)
_ZONE = re.compile(r"[A-Z][A-Za-z]+/[A-Z][A-Za-z_+-]+(?:/[A-Z][A-Za-z_+-]+)?")


#: a temperature said to be usual: the climate, not today's reading
_CLIMATE = re.compile(r"(?i)\b(?:is |are )?(?:typical|usual|normal|average|on average)\b")


def weather(text: str, at: int, out: list[Candidate]) -> None:
    """A weather reading with a temperature ("Weather: Sunny, 18 °C"), to the end of its sentence."""
    m = _AFTER_KEY.match(text, at)
    if not m:
        return
    le = text.find("\n", at)
    le = len(text) if le < 0 else le
    if _WEATHER_VALUE.match(text, m.end(), le) and not _CLIMATE.search(text, at, le):
        out.append(Candidate("state", m.end(), _clause_end(text, m.end(), le), HIGH, "user", "Weather:"))


def _clause_end(text: str, at: int, le: int) -> int:
    m = re.search(r"\.(?:\s|$)", text[at:le])
    return at + m.start() if m else at + len(text[at:le].rstrip())


def zone(text: str, k: int, out: list[Candidate]) -> None:
    m = _ZONE.match(text, k)
    if not m:
        return
    ls = text.rfind("\n", 0, k) + 1
    label = text[max(ls, k - 48) : k]
    if (_TZ_OWNER.search(label) or _in_user_block(text, ls)) and not re.search(
        r"(?i)\b(?:server|deployment|default|system|company|office)\b", label
    ):
        out.append(Candidate("state", k, m.end(), HIGH, "user", label.strip()[-32:]))


#: a key or list line ("  - Timezone: …", "Region: …"), and what heads a block about the user
_KEY_LINE = re.compile(r"[ \t]*(?:[-*•][ \t]+)?[\w ]{1,30}[:：]")
_USER_HEAD = re.compile(
    r"(?i)<user[\w-]*>|\buser(?:'s)?[ _-](?:preferences|profile|info(?:rmation)?|details|settings|context)\b"
    r"|\bthe user has the following\b|\babout (?:me|the user)\b|\bmy (?:preferences|profile|details|settings)\b"
)


def _in_user_block(text: str, ls: int) -> bool:
    """The zone's line (at ``ls``) is a key line of a block headed by a line about the user ("The
    user has the following preferences:", ``<user-preferences>``, "About me:"), up to 8 lines up."""
    if not _KEY_LINE.match(text, ls):
        return False
    for _ in range(8):
        if ls == 0:
            return False
        prev = text.rfind("\n", 0, ls - 1) + 1
        line = text[prev : ls - 1]
        if not line.strip():
            return False
        if not _KEY_LINE.match(line) or line.rstrip().endswith((":", "：")):
            head = line.strip()  # a heading, a tag or a line ending in a colon heads a block
            heading = head.endswith((":", "：", ">")) or head.startswith("#")
            return heading and _USER_HEAD.search(line) is not None
        ls = prev
    return False


#: a latitude, longitude pair ("52.5200, 13.4050") under a label naming where ("Location:", "Position:")
_COORDS = re.compile(r"\d{1,2}\.\d{3,}°?[NS]?\s*,\s*-?\d{1,3}\.\d{3,}°?[EW]?")
_WHERE_LABEL = re.compile(
    r"(?i)\b(?:location|position|where|ubicación|posición|standort|位置|所在地)\W{0,4}$"
)


def coordinates(text: str, s: int, out: list[Candidate]) -> int:
    """A coordinate pair at the digits text[s:] under a where-label; returns where it ends (``s`` when none)."""
    pair = _COORDS.match(text, s)
    if pair and _WHERE_LABEL.search(text, max(0, s - 32), s - (text[s - 1 : s] == "-")):
        out.append(Candidate("state", s, pair.end(), HIGH, "coordinates"))
        return pair.end()
    return s


#: where the user is, written out: "The user is in Australia.", "the user's city is Porto"
_USER_IN = re.compile(
    r"(?i:the[ \t]+user(?:[ \t]+is[ \t]+(?:currently[ \t]+|now[ \t]+)?(?:(?:located|based|living|staying)[ \t]+)?"
    r"(?:in|at|near)|'s[ \t]+(?:location|city|country|region)[ \t]+is)[ \t]+(?:the[ \t]+)?)"
    r"(?P<v>[A-Z][\w'’.-]*(?:(?:,[ \t]?|[ \t])[A-Z][\w'’.-]*){0,3})(?=[ \t]*(?:[.,;:)]|$|\n| and\b| right now\b))"
)
#: a screen, mode or tool the user is in, not a place ("The user is in Plan Mode", "… in VS Code")
_NOT_A_PLACE = re.compile(
    r"(?i)(?:^|\s)(?:mode|settings?|view|tab|page|screen|menu|editor|terminal|code|chat|checkout|dashboard|app|"
    r"application|window|panel|workspace|project|folder|file|browser|session|channel|group|room|queue|step|stage)\Z"
)
#: a condition or a question, not a fact ("If the user is in Europe, …", "Ask whether the user is in …")
_HYPOTHETICAL = re.compile(
    r"(?i)\b(?:if|when|whether|unless|whenever|assume|suppose|e\.g\.|example)\b[^.\n]*$"
)


def user_place(text: str, low: str, out: list[Candidate], users: list[int] | None = None) -> None:
    """The place after "the user is in" / "the user's city is" (a name, capitalised), said as a fact;
    ``users``: where each "user" is, if known (each "the user" holds one, 4 in)."""
    if users is None:
        users = []
        k = low.find("user")
        while k >= 0:
            users.append(k)
            k = low.find("user", k + 4)
    for k in users:
        k -= 4
        if k < 0 or not low.startswith("the ", k):
            continue
        if low.startswith((" is ", "'s "), k + 8):
            m = _USER_IN.match(text, k)
            ls = text.rfind("\n", 0, k) + 1
            if (
                m
                and not _HYPOTHETICAL.search(text, ls, k)
                and not _NOT_A_PLACE.search(m.group("v").rstrip("."))
            ):
                end = m.start("v") + len(m.group("v").rstrip("."))  # "Australia." ends a sentence
                out.append(
                    Candidate("state", m.start("v"), end, HIGH, "user", text[k : m.start("v")].strip())
                )


def user_at(near: str) -> bool:
    """The words right before a slot say it is where the user is now ("The user is located in")."""
    return _USER_AT.search(near) is not None
