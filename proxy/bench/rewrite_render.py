"""Render a labelled value as a live app would on a later request, for ``bench rewrite --corpus``.

:func:`render` gives the ``k``-th rendering of one labelled span: a date ``k`` days on and a time
``k`` minutes on, in the span's own format and language (ISO, numeric day-first or month-first,
written-out in any language of :mod:`analyzer.detection.calendar`, CJK, weekday names), an epoch
``k`` minutes on, a UUID of the same version; a template slot filled by what its name says (a date,
a period's start or end, a time, an id, a count, a memory block …); anything else with its digits
(or, with none, its last letter) changed. ``k=0`` of a rendered value is itself.

It does NOT detect anything: it is the stand-in for the app, independent of the detector.
"""

from __future__ import annotations

import datetime as dt
import re

from analyzer.detection.calendar import MONTH_WORDS, WEEKDAY_WORDS, weekday_name

_SLOT = re.compile(
    r"^(?:\{\{[^{}]*\}\}|\{[^{}]*\}|\$\{[^{}]*\}|\$[A-Za-z_]\w*|%\(\w+\)[sd]|<%=?(?:(?!%>).)*%>|\{\{\{[^{}]*\}\}\})$"
)
#: a strftime format quoted inside a slot: ``<%= Time.now.strftime("%H:%M") %>``
_SLOT_FORMAT = re.compile(r"""["']([^"']*%[aAbBdHIjmMpSyYZ][^"']*)["']""")
#: an unnamed blank right after "in" or "near" stands for a place
_PLACE_BEFORE = re.compile(r"(?i)\b(?:in|near)\s*$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_EPOCH = re.compile(r"^\d{10}(?:\d{3})?$")
#: 2001-09-09 .. 2100-01-01 in seconds
_EPOCH_RANGE = range(1_000_000_000, 4_102_444_800)
#: a period's bounds and relative days, in days from now
_DAY_OFFSETS = {"yesterday": -1, "tomorrow": 1, "last": -1, "previous": -1, "prev": -1, "next": 1}
_DAY_OFFSETS |= {"start": -7, "begin": -7, "first": -7, "end": -1}
_CJK_BEFORE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af][^\w]*$")
#: a collector's blank standing for a value ("_____", "[Server Name]"): filled like a slot
_BLANK = re.compile(r"^(?:_{3,}(?:@[\w.-]+)?|\[[A-Z][a-z]+(?: [A-Z][a-z]+){0,3}\])$")
_STRFTIME = re.compile(r"%[aAbBdHIjmMpSyYZ]")
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d])")
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_NUMERIC = re.compile(r"(?<![\d/.])(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?!\d)")
_CJK = re.compile(r"(\d{4})(\s*[年년]\s*)(\d{1,2})(\s*[月월]\s*)(\d{1,2})(?=\s*[日号일])")
_WORDS = re.compile(r"[^\W\d_]+(?:-feira)?")
_DAY_NEAR_MONTH = re.compile(r"(?<!\d)(\d{1,2})(?!\d)")
_JA_DAY = re.compile(r"([(（])([月火水木金土日])([)）])")
_JA = "月火水木金土日"
#: a moment with a day and minute to shift; fixed so both renderings are reproducible
BASE = dt.datetime(2025, 4, 24, 13, 52, 3)


def render(value: str, k: int, before: str = "") -> str:
    """The ``k``-th rendering of the labelled span ``value``; ``before``: the text before it, which
    names what an unnamed slot (``{}``) holds."""
    if _SLOT.match(value.strip()) or _BLANK.match(value.strip()):
        named = re.search(r"[A-Za-z]", value) and not value.startswith("_")
        if not named and _PLACE_BEFORE.search(before):
            return _fill("location", k)
        return _fill(value, k, before) if named else _fill(before[-40:], k, before, named=False)
    if len(_STRFTIME.findall(value)) >= 2:
        return (BASE + dt.timedelta(days=k, minutes=k)).strftime(value)
    if k == 0:
        return value
    out = _shift_dates(value, k)
    out = _CLOCK.sub(lambda m: _minute(m, k), out)
    if out != value:
        return out
    v = value.strip()
    if _EPOCH.match(v) and int(v[:10]) in _EPOCH_RANGE:  # an epoch a later request reads k minutes on
        return value.replace(v, str(int(v) + k * (60_000 if len(v) == 13 else 60)))
    if any(ch.isdigit() for ch in value):
        keep = {m.start() + i for m in _UUID.finditer(value) for i in (14, 19)}  # version, variant
        return "".join(
            str((int(ch) + k) % 10) if ch.isdigit() and i not in keep else ch for i, ch in enumerate(value)
        )
    return _last_letter(value, k)


#: what a slot's name says it holds (a few languages' words besides English)
_TIME_WORDS = {"time", "now", "timestamp", "datetime", "clock", "ts", "hora", "heure", "zeit", "uhrzeit"}
_DATE_WORDS = {"date", "today", "day", "weekday", "yesterday", "tomorrow", "period", "fecha", "datum", "jour"}
_DATE_WORDS |= {"dia", "giorno", "hoy", "heute", "oggi", "hoje"}
#: "data_atual", "fecha_actual", "data_corrente": today's date in Portuguese, Spanish, Italian
_TODAY_WORDS = {"atual", "attuale", "corrente", "odierna"}  # "actual" also English (actual_data)
_NAME_WORDS = {"name", "username", "nickname", "owner", "nombre", "nom", "prenom", "vorname", "nome"}
_MACHINE = {"ram", "disk", "free", "used", "usage"}
#: where a chat app's conversation is held: its name is the chat's, not a person's
_PLACES = {"guild", "server", "channel", "group", "room", "chat"}


def _fill(slot: str, k: int, before: str = "", named: bool = True) -> str:
    words = set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", slot).lower()))
    # a name of words written together ("chatname", "userfullname", "membercount"), braces and spaces off
    joined = re.sub(r"[^a-z]", "", slot.lower()) if named and len(words) == 1 else ""
    if joined.startswith(("chat", "channel", "group", "server", "room")) and joined.endswith(
        ("name", "title")
    ):
        return ("Family chat", "Book club")[k % 2]
    if joined.endswith("count"):
        return str(12 + k)  # a count of members, messages …
    if joined.endswith(("fullname", "username", "firstname", "lastname")):
        words.add("name")
    if named and words & _PLACES and words & {"name", "title"}:  # GUILD_NAME, channel_title
        return ("Family chat", "Book club")[k % 2]
    if (
        named
        and "user" in words
        and words <= {"user", "alias", "display", "handle", "nick", "the", "current"}
    ):
        words.add("name")  # {{ user }}, {{ userAlias }}: the user's name
    if (
        named
        and words & {"address", "addr"}
        and not words & {"ip", "mac", "wallet", "server", "node", "email"}
    ):
        words.add("location")  # local_address, user_address: a place
    if named and "at" in words:  # created_at, paged_at: a moment
        words.add("time")
    moment = BASE + dt.timedelta(days=k, minutes=k)
    fmt = _SLOT_FORMAT.search(slot)
    if fmt:
        return moment.strftime(fmt.group(1))
    days = next((d for w, d in _DAY_OFFSETS.items() if w in words), 0)
    moment += dt.timedelta(days=days)
    if words & _TIME_WORDS:
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    if words & {"weekday", "dow"} or words >= {"day", "week"}:  # current_weekday, day_of_week: its name
        return moment.strftime("%A")
    if words & {"location", "place", "city"} and words & {"name", "atmosphere", "description"}:
        words -= {"name"}  # location_name: a place, not a person
    if words & _DATE_WORDS or (words & _TODAY_WORDS and words & {"data", "fecha"}):
        return moment.strftime("%A, %B %d, %Y")
    if words & {"month", "year", "week"}:
        if "week" in words:
            return str((moment.day - 1) // 7 + 1)
        if "year" in words:
            return str(moment.year)
        return str(moment.month) if _CJK_BEFORE.search(before) else moment.strftime("%B")
    if words & {"uuid", "guid"}:
        return f"3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a{k:02d}"
    if words & {"email", "mail"}:
        return ("ana@example.com", "ben@example.com")[k % 2]
    if words & {"branch"}:  # before the name: branch_name is a branch
        return ("main", "feature/cart-total")[k % 2]
    if words & _NAME_WORDS:
        return ("Ana", "Ben")[k % 2]
    if words == {"commit"} or words == {"git", "commit"}:  # one commit: its hash
        return ("a1b2c3d", "9f8e7d6")[k % 2]
    if words & {"commit", "commits", "log"} or (
        words & {"status", "diff"} and "git" in (words | _words(before[-60:]))
    ):
        return _GIT[("status" in words or "diff" in words) * 2 + k % 2]
    if words & {"id", "session", "request", "trace", "conversation"}:
        return f"sess_8f3a9c1d2e7b6a{k:02d}"
    if words & {"state", "json", "context", "metadata"}:
        return '{"step": %d, "open_tasks": ["review", "deploy"], "cart_items": %d}' % (3 + k, 2 + k)
    if "user" in words and words & {"info", "information", "details", "data"}:
        return _USER_INFO[k % 2]
    if words & {"memory", "memories", "profile", "facts"} and not words & _MACHINE:
        return _MEMORIES[k % 2]  # what the app remembers of this user
    if words & {"mem", "memory", "ram", "disk"}:
        return f"{3.2 + k / 10:.1f} GB"
    if words & {"weather", "forecast"}:
        return ("Sunny, 18 °C", "Light rain, 16 °C")[k % 2]
    if words & {"lat", "latitude", "lon", "lng", "longitude", "coordinates"}:
        return f"{41.0082 + k / 1000:.4f}"
    if words & {"location", "city", "place"}:
        return ("Istanbul", "Ankara")[k % 2]
    if words & {"country"}:
        return ("Portugal", "Canada")[k % 2]
    if words & {"timezone", "tz", "zone"}:
        return ("Europe/Warsaw", "America/New_York")[k % 2]
    if words & {"start", "begin", "end", "since", "until"}:  # a period's bound, no other word: a date
        return moment.strftime("%A, %B %d, %Y")
    if named:  # a name that says nothing known (``${EXPR_4}``): the label before it says what it holds
        return _fill(before[-40:], k, before, named=False)
    return str(48_213 + 17 * k)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


_GIT = (
    "a1b2c3d Fix the cart total\ne4f5a6b Add tests",
    "9f8e7d6 Round prices\na1b2c3d Fix the cart total",
    "M src/app.py\n?? notes.txt",
    "M src/cart.py\nA  tests/test_cart.py",
)
_USER_INFO = (
    "Name: Ana Silva\nCity: Lisbon\nE-mail: ana.silva@example.com",
    "Name: Ben Okafor\nCity: Lagos\nE-mail: ben.okafor@example.com",
)
_MEMORIES = (
    "- Prefers short answers.\n- Has a dog called Rex.\n- Is learning Spanish.",
    "- Works night shifts as a nurse.\n- Is allergic to peanuts.\n- Plays the cello.",
)


def _minute(m: re.Match, k: int) -> str:
    h, mi = int(m.group(1)), int(m.group(2))
    if h > 23 or mi > 59:
        return m.group(0)
    total = (h * 60 + mi + k) % (24 * 60)
    hh = f"{total // 60:0{len(m.group(1))}d}"
    out = f"{hh}:{total % 60:02d}"
    return out + (f":{m.group(3)}" if m.group(3) else "")


def _shift_dates(value: str, k: int) -> str:
    def iso(m: re.Match) -> str:
        try:
            d = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))) + dt.timedelta(
                days=_days(int(m.group(3)), k)
            )
        except ValueError:
            return m.group(0)
        return d.isoformat()

    def numeric(m: re.Match) -> str:
        a, sep, b, y = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        day_first = a > 12 or (sep == "." and b <= 12)
        day = a if day_first else b
        new = day + _days(day, k)
        first, second = (new, b) if day_first else (a, new)
        return f"{first:0{len(m.group(1))}d}{sep}{second:0{len(m.group(3))}d}{sep}{y}"

    def cjk(m: re.Match) -> str:
        day = int(m.group(5))
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{m.group(4)}{day + _days(day, k)}"

    out = _CJK.sub(cjk, _NUMERIC.sub(numeric, _ISO.sub(iso, value)))
    months = [w for w in _WORDS.finditer(value) if w.group(0).lower().rstrip(".") in MONTH_WORDS]
    if out == value and months:
        at = months[0].start()
        days = [
            m
            for m in _DAY_NEAR_MONTH.finditer(value)
            if ":" not in value[max(0, m.start() - 1) : m.end() + 1]
        ]
        days = [m for m in days if 1 <= int(m.group(1)) <= 31]
        if days:
            m = min(days, key=lambda d: abs(d.start() - at))
            day = int(m.group(1))
            out = value[: m.start()] + f"{day + _days(day, k):0{len(m.group(1))}d}" + value[m.end() :]
    shift = -k if out != value and _went_back(value, out) else k
    out = _WORDS.sub(
        lambda w: weekday_name(w.group(0), shift) if w.group(0).lower() in WEEKDAY_WORDS else w.group(0), out
    )
    return _JA_DAY.sub(lambda m: m.group(1) + _JA[(_JA.index(m.group(2)) + shift) % 7] + m.group(3), out)


def _days(day: int, k: int) -> int:
    """``k`` days on, or back where that would leave the month (the weekday follows)."""
    return -k if day + k > 28 else k


def _went_back(old: str, new: str) -> bool:
    a = [int(x) for x in re.findall(r"\d+", old)]
    b = [int(x) for x in re.findall(r"\d+", new)]
    return sum(b) < sum(a)


def _last_letter(value: str, k: int) -> str:
    for i in range(len(value) - 1, -1, -1):
        ch = value[i]
        if ch.isalpha() and ch.isascii():
            base = "a" if ch.islower() else "A"
            return value[:i] + chr(ord(base) + (ord(ch) - ord(base) + k) % 26) + value[i + 1 :]
    return value + "·" * k
