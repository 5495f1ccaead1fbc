"""What the words around a value say about it.

:func:`label` gives the words before a value on its line and sentence (at most
:data:`MAX_LABEL` characters, never past the previous value); :func:`word_classes` sorts them
into "now", "static", "around", "session" and "example" wording (other languages from
:mod:`.wording`); :data:`FIXED` (hardware and protocol ids) and :data:`DIGEST` (commit,
sha256, checksum) label ids; helpers say where a value stands (changelog or release line,
version, alone on its line, in a link). Code and example regions are :mod:`.regions`'.

It does NOT decide anything (:mod:`.judge`) nor keep state.
"""

from __future__ import annotations

import re

from analyzer.detection import foreign, wording
from analyzer.detection.prefilters import holds_any

MAX_LABEL = 80

#: the character class first (the look-behinds then include it): sre skips to . ; ! ? 。in C
SENTENCE_END = re.compile(
    r"[.;!?。！？；](?<!\be\.g.)(?<!\bi\.e.)(?<!\bvs.)(?<!\bNo.)(?:(?<=[。！？；])|\s|$)"
)
# Word classes of a label: its lower-case words (and a few marks, "e.g.", "©"); a class is words and word pairs.
_CLASS_WORDS = {
    "example": "example examples like format formatted sample samples placeholder placeholders pattern syntax schema mock dummy fake "
    "say demo specimen suppose supposing assume assuming imagine pretend hypothetical hypothetically",
    "static": "cutoff cutoffs trained training knowledge updated modified revised revision founded established incorporated "
    "release released launch launched published introduced version versions effective valid expires expire expiry "
    "expiration deadline due born died birthday anniversary copyright deprecated sunset announced signed happened "
    "occurred began opened closed open opens close closes hours schedule scheduled schedules cron holiday holidays "
    "meeting meetings appointment appointments maintenance history historical timeline snapshot vintage default defaults",
    "now": "now current currently today today's tonight date datetime time timestamp clock ts sent received logged requested "
    "generated rendered started created fetched retrieved it's",
    "session": "session request conversation turn run trace remaining quota balance login visit iteration attempt",
    "around": "in by from before after since until till between every daily weekly each during ago start starts end ends first "
    "last earliest latest was were reference fixed static constant build built window",
}
_CLASS_PHRASES = {
    "example": {
        "if today",
        "if it",
        "suppose today",
        "assuming today",
        "assume today",
        "imagine today",
        "such as",
        "for example",
        "for instance",
        "in the",
        "would be",
        "should look",
        "valid value",
        "valid values",
        "test id",
        "test uuid",
        "test value",
        "test values",
    },
    "static": {"took place", "release date", "created by", "written by"},
    "now": {
        *"right now|at the|local time|local date|it is|yesterday was|yesterday is|tomorrow is".split("|"),
        *"tomorrow will|gestern war|morgen ist|hier c'était|demain sera|ayer fue|mañana es".split("|"),
        *"ieri era|domani è|hari ini|saat ini|i dag|sommes le".split("|"),  # not "nous sommes ouverts"
        # telling the time: "Son las 15:42", "Sono le 15:42", "Klockan är 15:42"
        *"son las|es la|sono le|klockan är|kello on|jest godzina".split("|"),
    },
    "around": {"at least", "at most"},
}
_CLASS_MARKS = re.compile(
    r"(?i)(?P<example>\be\.g\b|\bi\.e\b|\bhh:mm\b|\byyyy\b|\biso[ -]?8601\b|\brfc[ -]?(?:3339|2822|5322)\b)|(?P<static>\bcut-off|©)|(?P<now>_at\b)"
)
#: a literal each of :data:`_CLASS_MARKS` contains: an ASCII label without any has no mark (an
#: ASCII text lowered is exact; a non-ASCII one goes to the regex, whose case folding differs)
_MARK_WORDS = ("e.g", "i.e", "hh:mm", "yyyy", "iso", "rfc", "cut-off", "_at")
_LABEL_WORD = re.compile(r"[a-z0-9]+(?:-(?:in|out|up|off)\b)?(?:_[a-z0-9]+)*(?:'[a-z]+)?")
#: opened_at, sent_on, start_ts: a field holding a moment
_EVENT_SUFFIX = ("at", "on", "ts", "time", "date", "timestamp")
_BY_WORD: dict[str, list[str]] = {}
for _table in (_CLASS_WORDS, wording.WORDS):
    for _cls, _words in _table.items():
        for _w in _words.split():
            _BY_WORD.setdefault(_w, []).append(_cls)
#: not "your": a system prompt's "your name" is the assistant's
_USER_OWNER = frozenset(("user", "user's", "users"))
_USER_PART = frozenset(
    "name email e-mail timezone zone location city country region phone address nickname coordinates".split()
)
_BY_PHRASE = {p: c for c, ps in _CLASS_PHRASES.items() for p in ps}
_BY_PHRASE.pop("in the")  # "in the form" only: checked below
_BY_PHRASE.pop("at the")  # "at the moment" only: checked below
#: the first words of :data:`_BY_PHRASE`: a pair starting with another word is no phrase
_PHRASE_FIRST = frozenset(p.split()[0] for p in _BY_PHRASE)

#: the words that name a moment; after (or "of" before) another noun, that noun's moment
_MOMENT = frozenset(("date", "time", "datetime", "timestamp"))
#: nouns and verbs whose date or time is another moment's than now: an event, an order's step, a
#: shop's hours ("Delivery date", "Pickup time", "Concert:", "Posted on"); a denylist, so that
#: "Client time", "Tokyo time" or "Device time" stay the present
EVENT_NOUNS = frozenset(
    "delivery deliveries departure departures arrival arrivals pickup pick-up dropoff drop-off check-in check-out "
    "checkin checkout concert concerts event events webinar webinars lecture lectures class classes flight flights "
    "train show shows match game games sale sales offer promotion invoice invoices issue publication order orders "
    "shipping shipment reservation booking start starts end ends opening closing lunch dinner breakfast wedding "
    "party renewal payment billing trial exam interview posted post purchase purchased shipped delivered departs "
    "arrives leaves kickoff kick-off premiere screening deadline due submission submitted birth election elections".split()
)


def _of_an_event(words: list[str], i: int) -> bool:
    """``words[i]`` ("date", "time") is an event's moment: "Delivery date", "Start time", "Date of
    issue"; not "Current date", "Client time", "Date and time", "Time of request"."""
    for j in (i - 1, i + 2) if i + 2 < len(words) and words[i + 1] == "of" else (i - 1,):
        if 0 <= j < len(words) and words[j] in EVENT_NOUNS:
            return True
    return False


def word_classes(label_text: str) -> frozenset[str]:
    """Which classes ("example", "static", "now", "session", "user", "around") the words of a label
    belong to; one split of the label and set look-ups, no regex per class."""
    low = label_text.lower()
    tokens = _LABEL_WORD.findall(low)
    split = "_" in low  # else no token holds one: the tokens are the words
    words: list[str] = [] if split else tokens
    found: set[str] = set()
    for token in tokens if split else ():
        if "_" not in token:
            words.append(token)
            continue
        parts = token.split("_")
        if parts[-1] in _EVENT_SUFFIX:
            found.add("now")  # a field named for a moment: its words ("opened", "expires") describe the event
            parts = [
                p
                for p in parts
                if "static" not in _BY_WORD.get(p, ()) and "around" not in _BY_WORD.get(p, ())
            ]
        words += parts
    # each classed word once (a set, as a loop finds them): a moment word where one place is no event's
    for w in _BY_WORD.keys() & words:
        if w not in _MOMENT or any(x == w and not _of_an_event(words, i) for i, x in enumerate(words)):
            found.update(_BY_WORD[w])
    if not _PHRASE_FIRST.isdisjoint(words):  # else no pair can be a phrase
        for a, b in zip(words, words[1:]):
            if a in _PHRASE_FIRST:
                c = _BY_PHRASE.get(f"{a} {b}")
                if c:
                    found.add(c)
    if _USER_OWNER.intersection(words) and _USER_PART.intersection(words):
        found.add("user")  # "User's timezone:", "the user's name is": the current user's own value
    elif foreign.users_own(low):
        found.add("user")  # "Nome do usuário:", "用户名：", "Name des Benutzers:"
    if "in the form" in low:
        found.add("example")
    if "at the moment" in low:
        found.add("now")
    if ("_at" in low or "." in low or "©" in low or ":" in low or "-" in low or "rfc" in low) and (
        not label_text.isascii() or holds_any(low, _MARK_WORDS)
    ):
        found.update(m.lastgroup for m in _CLASS_MARKS.finditer(label_text))
    if not low.isascii():
        found.update(m.lastgroup for m in wording.MARK.finditer(low))
    if "now" in found and foreign.event(low):
        found.discard("now")  # "Hora de salida", "会议时间": another moment's, not now
    return frozenset(found)


FIXED = re.compile(
    r"(?i)\b(?:services?|characteristics?|descriptors?|gatt|ble|bluetooth|clsid|iid|interface|namespace|protocol|"
    r"schema|hardware|firmware|vendor|profile|product|plugin|extension|app(?:lication)?[ _-]?id|client[ _-]?id|"
    r"well-known|constant|registry|type ?id|model[ _-]?id|project|workspace|org(?:anization)?|\$id|urn)\b"
)
#: "… at 14:05 their local time": the clock of the person served, said after the value
THEIR_TIME_AFTER = re.compile(
    r"(?i)[ \t]*\(?(?:their|your|the user's|user's)[ \t]+(?:local|current)[ \t]+time\b"
)
FIXED_AFTER = re.compile(r"(?i)^\W{0,3}\(?(?:stable|fixed|constant|permanent|never changes)\b")
DIGEST = re.compile(
    r"(?i)(?:commit|sha\d*|revision|rev|hash|checksum|digest|md5|etag|fingerprint|integrity)(?:\s+(?:is|was|id))?\W{0,6}$"
)
_DIGEST_WORD = re.compile(
    r"(?i)\b(?:commit|sha\d*|revision|hash|checksum|digest|md5|etag|fingerprint|integrity)\b"
)
#: "anthropic-version: 2023-06-01", "API version 2024-02-15"
VERSION = re.compile(r"(?i)version\W{0,4}$")
#: only a bullet/heading before the date …
_CHANGELOG_LINE = re.compile(r"^[ \t]*(?:[-*+]|#{1,6}|\d+\.)?[ \t]*\[?$")
#: … and a colon or dash after it: "- 2024-03-15: v2.4 adds …"
_CHANGELOG_AFTER = re.compile(r"\]?[ \t]*(?::|-|–|—|\()")
#: "## [1.2.0] - 2024-03-15"
_RELEASE_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]*\[?v?\d+\.\d+[^\n]*$")
_ALONE_BEFORE = re.compile(r"^[ \t>*_#\[(-]*(?:\**(?:[A-Za-z][\w ./-]{0,30})?\**[ \t]*[:=|][ \t]*)?$")
_ALONE_AFTER = re.compile(r"[ \t\])*_.,]*(?:\(?[A-Z]{2,5}\)?)?[ \t\])*_.]*$")
_URL_TAIL = re.compile(r"\b(?:https?|ftp|s3|gs|wss?)://[^\s<>\"'`)\]]*\Z")


#: how far a line is read around a value: a longer line is prose, not a field or a table row
REACH = 400


def line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The value's line, at most :data:`REACH` characters either side."""
    lo = max(0, start - REACH)
    hi = min(len(text), end + REACH)
    line_end = text.find("\n", end, hi)
    line_start = text.rfind("\n", lo, start)
    return (line_start + 1 if line_start >= 0 else lo), (hi if line_end < 0 else line_end)


def label_start(text: str, start: int, floor: int = 0) -> int:
    """Where the label of a value at ``start`` begins: its line, its sentence, after the
    previous value (``floor``), at most :data:`MAX_LABEL` characters back."""
    at = max(text.rfind("\n", max(0, start - MAX_LABEL), start) + 1, floor, start - MAX_LABEL)
    last = at
    for m in SENTENCE_END.finditer(text, at, start):
        last = m.end()
    return last


def label(text: str, start: int, floor: int = 0) -> str:
    return text[label_start(text, start, floor) : start]


def clause(label_text: str) -> str:
    """The last clause of a label: what stands right before the value ("request " in
    "Active workspace id: ws_41a9c2, request ")."""
    cut = max(label_text.rfind(ch) for ch in ",;()，（）")  # and CJK's full-width marks
    return label_text[cut + 1 :]


def after(text: str, end: int, width: int = 24) -> str:
    """The words right after a value, up to the end of its line."""
    stop = text.find("\n", end, end + width)
    return text[end : end + width if stop < 0 else stop]


def alone_on_line(text: str, start: int, end: int) -> bool:
    """The value stands on its own line, maybe after a short key (``Date: …``, ``| 2026-11-30 |``)."""
    ls, le = line_bounds(text, start, end)
    return bool(_ALONE_BEFORE.match(text[ls:start]) and _ALONE_AFTER.match(text[end:le]))


def static_date(text: str, start: int, end: int) -> str:
    """Why a date names a fixed thing (an API version, a changelog entry, a release heading), or ""."""
    if VERSION.search(text, max(0, start - 24), start):
        return "version"
    ls, le = line_bounds(text, start, end)
    if _CHANGELOG_LINE.match(text[ls:start]) and _CHANGELOG_AFTER.match(text, end):
        return "changelog"
    return "release heading" if _RELEASE_HEADING.match(text[ls:le]) else ""


_JSON_KEY = re.compile(r"[\"“”]\w+[\"“”]\s*:\s*[\"“]?$")


def in_record_list(text: str, start: int, reach: int = 1500) -> bool:
    """A JSON field of an object inside a list (``"messages":[{…"date":"…"}]``): a record's own
    moment (an e-mail's, a message's), not the request's."""
    if not _JSON_KEY.search(text, max(0, start - 40), start):
        return False
    lo = max(0, start - reach)
    opened = text.rfind("[", lo, start)
    return (
        opened >= 0 and text.count("[", lo, start) > text.count("]", lo, start) and "{" in text[opened:start]
    )


def in_url(text: str, start: int) -> bool:
    return bool(_URL_TAIL.search(text, max(0, start - 400), start))


def digest_label(text: str, start: int, lab: str = "") -> bool:
    """Labelled as a digest: right before it ("commit 3f2a…", "sha256:") or anywhere in its
    label ("Checksum of quill-4.2.0.tar.gz: 5d41…")."""
    return bool(DIGEST.search(text, max(0, start - 24), start) or _DIGEST_WORD.search(lab))
