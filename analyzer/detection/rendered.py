"""Values a live app has already rendered as plain text, found at the labels that say they change.

Once a template is filled, ``{{USER_NAME}}`` is just ``Ana``; only its label still tells. Found here,
each as a ``state`` candidate:

- :func:`labelled_lines`: the value of a ``Label: value`` line whose label names a counter of the
  session (``- step: 3``, ``Turn number: 7``, ``Requests left this month: 120``), the current
  user's own field in several languages (``**User:** Ana``, ``nazwa użytkownika: Ana``,
  ``E-Mail des Benutzers: …``, ``用户名：…``), the weather now (``Weather: Sunny, 18 °C``) or where
  this conversation is ("The server you are in is called: …"); the ``key: value`` lines and the
  memory list under a heading about the user ("# Customer Context", "Long-term memory about this
  user"); and a timezone the user is in (``my current timezone: Europe/Warsaw``, ``I'm in
  Europe/Warsaw``; a deployment's ``(timezone: Europe/Rome)`` is configuration).

Rendered dates (a period's bounds, a place after a date) are in :mod:`.rendered_dates`. The scan
reaches a line only where its label holds a label word (:func:`.label_keys.search`), never a pass per rule.

Durations since the last message (:mod:`.elapsed`) and memory blocks under their heading
(:mod:`.keptmemory`) are read from here too.

It does NOT judge examples or code (:mod:`.judge` does), and leaves values that no label tells
apart from fixed text ("logged in to Docker Hub as Ana", "You are helping Ana").
"""

from __future__ import annotations

import re
from bisect import bisect_right

from analyzer.detection import elapsed, identity, keptmemory, label_keys, whereabouts
from analyzer.detection.candidate import HIGH, MEDIUM, Candidate

#: the areas of IANA zone names ("Europe/Warsaw"), found with ``str.find``
_AREAS = tuple(
    f"{a}/" for a in "europe america asia africa australia pacific atlantic indian antarctica".split()
)
#: how far before a colon its label may begin
_LABEL_REACH = 72
_LONG_LINE = 4000  # characters: a longer line is prose or data, not `Label: value`
#: a label that is the user alone ("User", "Current user", "Benutzer"): its value is their name
_BARE = re.compile(
    r"(?i)^(?:(?:the |current |logged[ -]in |signed[ -]in |active )?(?:user|visitor))$|^(?:aktueller )?(?:benutzer|nutzer)$"
    r"|^utilisateur(?: actuel)?$|^usuario(?: actual)?$|^usuário(?: atual)?$|^utente$|^u[żz]ytkownik$|^gebruiker$"
    r"|^пользователь$|^користувач$|^kullanıcı$|^(?:当前)?用户$|^ユーザー$|^사용자$"
)
#: a ``Label: value`` line (a list item, bold or not)
_LINE = re.compile(
    r"[ \t>]*(?:[-*•+][ \t]+)?(?:\*\*|__)?(?P<label>[^\n:：*{}<>]{1,60}?)(?:\*\*|__)?[ \t]*[:：]"
    r"(?:\*\*|__)?[ \t]*(?P<value>[^\n]*)"
)
#: a label that names a limit or a rate, not a reading ("Max steps: 25", "Requests per minute: 60")
_LIMIT = re.compile(
    r"(?i)\b(?:max(?:imum)?|min(?:imum)?|limit|at most|up to|per|each|every|allowed|budget of|default|"
    r"version|number of steps|total)\b|\bstep \d|\d"
)
#: a count, with a unit or "of N" after it ("3 of at most 25", "412 s")
_COUNT = re.compile(
    r"(?P<n>\d[\d,_]*(?:\.\d+)?)(?:[ \t]*(?:s|sec|seconds?|ms|min|minutes?|%))?(?=[ \t]*(?:$|of\b|/|\(|,|;|\.[ \t]*$))"
)
#: the user's own field after an owner word (identity and whereabouts; preferences and roles are settings)
_PART = re.compile(
    r"(?i)(?:^|[\s_-])(?:name|first[ _-]?name|last[ _-]?name|full[ _-]?name|username|nickname|handle|e-?mail|mail|"
    r"id|location|city|country|region|address|phone|time ?zone|tz|login|nazwa|imię|nazwisko|lokalizacja|"
    r"miasto|kraj|strefa|vorname|nachname|ort|stadt|land|standort|nom|prénom|ville|pays|nombre|apellido|"
    r"ciudad|país|ubicación|nome|sobrenome|cidade|localização|cognome|città|paese|naam|woonplaats|plaats|"
    r"имя|фамилия|город|страна|почта)(?:$|[\s_-])|名|邮箱|郵箱|城市|位置|所在地|メール|이름|이메일|위치|도시"
)
_PREFERENCE = re.compile(
    r"(?i)\b(?:language|lang|locale|units?|currency|verbosity|tone|style|theme|role|roles|permissions?|plan|tier|"
    r"type|prompt|message|input|query|question|request|says?|asks?|wants?)\b|sprache|langue|idioma|lingua|język|taal|语言|言語|언어"
)
#: a short plain value: a name, a place, an e-mail, a zone, a number, a word or two (no sentence)
_PLAIN = re.compile(
    r"(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[^\W\d_][\w'’.-]*/[\w+-]+(?:/[\w+-]+)?|\d[\w.,:/ -]{0,30}"
    r"|[^\W_a-z][\w'’.&-]*(?:[ ,][ ]?[^\W_][\w'’.&-]*){0,3}|\w[\w.+-]*)(?=[ \t]*$)"
)
_EMAIL_OR_NAME = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[^\W\d_a-z][\w'’.-]*(?: [^\W\d_a-z][\w'’.-]*){0,3}"
)
#: dialogue words: a ``User:`` line of a transcript is content, not the user's name
_DIALOGUE_LINE = re.compile(
    r"(?im)^[ \t>*]*(?:assistant|ai|bot|model|system|agent|human|user|q|a|бот|асистент|ассистент|助手|机器人|アシスタント|봇)[ \t*]*[:：]"
)
_GREETING = re.compile(r"(?i)^(?:hi|hello|hey|thanks|thank you|yes|no|ok|okay|sure|please|help)\b")
#: a heading about the user's own facts or memory (``slotcontext`` reads the same headings for slots)
_USER_HEADING = re.compile(
    r"(?i)\b(?:facts?|infos?|information|details|data|memor(?:y|ies)|known|everything)\b[^\n:]{0,30}?\b(?:about|on|of"
    r"|regarding)\s+(?:the |this |our )?(?:user|customer)\b|\b(?:user|customer|member|patient)(?:'s)?[ _-]?(?:profile|info"
    r"|information|details|facts|data|memory|memories|context)\b|\bwhat (?:you|we) know about (?:the |this )?user\b"
    r"|^\W*about (?:the |this )?user\W*$|^\W*(?:the )?current (?:user|customer)\W*$|关于用户的(?:信息|资料|事实)|用户(?:信息|画像|资料|档案|设定)|ユーザー(?:情報|プロフィール)|사용자 (?:정보|프로필)"
    r"|профиль пользовател|(?:информация|сведения|данные|факты) о пользователе|(?:benutzer|nutzer)profil|(?:infos?|informationen|fakten|wissen) über (?:den |die )?(?:benutzer|nutzer)"
    r"|profil (?:de l'|d')?utilisateur|(?:informations|faits) sur l'utilisateur|perfil del usuario|(?:información|datos) (?:sobre el|del) usuario"
    r"|perfil do usuário|(?:informações|dados) (?:sobre o|do) usuário|profilo (?:dell')?utente|(?:informazioni|dati) (?:sull'|dell')utente"
    r"|kullanıcı (?:profili|bilgileri)|gebruikersprofiel|profil użytkownika|informacje o użytkowniku"
)
_SIGILS = re.compile(r"\{|\$\{|<%|\[[A-Z][a-z]+(?: [A-Z][a-z]+){0,3}\]|_{3,}")
#: a list item inside another: a detail of the item above, not a field of the user
_NESTED = re.compile(r"[ \t]{2,}[-*•+][ \t]")
_ITEM = re.compile(r"[ \t]*[-*•][ \t]+(?P<body>[^\n]{2,200})")
#: list items that tell the assistant what to do are instructions, not what it remembers
_IMPERATIVE = re.compile(
    r"(?i)^(?:do|don't|never|always|use|be|avoid|treat|refer|keep|ask|answer|respond|reply|make|if|when|you|"
    r"only|note|remember|mention|write|include|call)\b"
)


def labelled_lines(text: str, low: str, out: list[Candidate], users: list[int] | None = None) -> None:
    """Values under a counter, user, weather or "you are in" label, the lines under a user heading,
    and a timezone the user is in (see the module docstring). Labels are read only before a colon
    and on Markdown headings, zones only at the slash after an area's name (``str.find``: one pass for all areas).
    ``users``: where each "user" is, if known (:func:`.slots.user_values` found them)."""
    identity.find(text, low, out)
    elapsed.find(text, low, out)
    whereabouts.user_place(text, low, out, users)
    keptmemory.rendered_blocks(text, low, out)
    blocks = []  # headings first: the lines under one are read as its block
    k = low.find("#")
    while k >= 0:
        ls = low.rfind("\n", 0, k) + 1
        le = low.find("\n", k)
        le = len(low) if le < 0 else le
        if not low[ls:k].strip():  # a Markdown heading, indented or not
            key = label_keys.search(low, k, le)
            if key and key.group("owner"):
                end = _at_key(text, key, out)
                blocks.append((k, max(end, blocks[-1][1]) if blocks else end))  # ends so far, at most
        k = low.find("#", le)
    starts = [a for a, _ in blocks]
    for sep in (":", "："):
        prev_line, prev, done = -1, -1, -1
        k = low.find(sep)
        while k >= 0:
            ls = low.rfind("\n", 0, k) + 1
            seg = max(ls, prev + 1) if ls == prev_line else ls
            prev_line, prev = ls, k
            if k >= done and k - seg <= _LABEL_REACH and not _in_block(blocks, starts, k):
                key = label_keys.search(low, max(seg, k - _LABEL_REACH), k)
                if key:
                    done = max(done, _at_key(text, key, out))
            k = low.find(sep, k + 1)
    zones = []  # (area, where): each area's names in turn, found at the slashes (one pass, not one an area)
    j = low.find("/")
    while j >= 0:
        for i, area in enumerate(_AREAS):
            k = j + 1 - len(area)
            if k >= 0 and low.startswith(area, k):
                zones.append((i, k))
        j = low.find("/", j + 1)
    for _, k in sorted(zones):
        if not low[k - 1 : k].isalpha():
            whereabouts.zone(text, k, out)


def _at_key(text: str, key: re.Match, out: list[Candidate]) -> int:
    """The value of the line whose label holds ``key``, or the block under it when it is a heading
    about the user; returns where what it read ends (-1: nothing)."""
    k = key.start(key.lastindex)  # the word's start (the match may hold the non-letter before it)
    if key.group("weather"):
        whereabouts.weather(text, key.end(), out)
        return -1
    ls = text.rfind("\n", 0, k) + 1
    le = text.find("\n", k)
    le = len(text) if le < 0 else le
    if le - ls > _LONG_LINE:
        return -1  # no label line: reading it again at each of its colons would be quadratic
    line = text[ls:le]
    if key.group("owner") and _USER_HEADING.search(line) and _heading(line):
        return _under_heading(text, le, line, out)
    m = _LINE.match(text, ls, le)
    if not m or not (m.start("label") <= k < m.end("label")) or not m.group("value").strip():
        return -1
    label, v0 = m.group("label"), m.start("value")
    value = text[v0:le].rstrip()
    if not value or value[0] in "{$<[%`\"'":
        return -1  # a slot, a tag, a quoted example: other rules read it
    if key.group("counter"):
        _counter(text, label, v0, le, out)
    elif key.group("owner") and not _NESTED.match(line):
        _user_field(text, ls, label, v0, value, out)
    elif key.group("here") and label.rstrip().endswith(("called", "named", " is")):
        p = _PLAIN.match(text, v0 + (1 if text[v0] == "#" else 0), le)
        if p:
            out.append(Candidate("state", v0, p.end(), HIGH, "user", f"{label.strip()}:"))
    return le


def _in_block(blocks: list[tuple[int, int]], starts: list[int], k: int) -> bool:
    """``k`` lies under one of the headings' blocks (each kept with the furthest end so far)."""
    i = bisect_right(starts, k) - 1
    return i >= 0 and k < blocks[i][1]


def _heading(line: str) -> bool:
    """A Markdown heading, a line ending in a colon or a bold line (not a list item)."""
    s = line.strip()
    if _ITEM.match(line):
        return False
    return (
        s.startswith("#") or s.rstrip("*").endswith((":", "：")) or (s.startswith("**") and s.endswith("**"))
    )


def _counter(text: str, label: str, v0: int, le: int, out: list[Candidate]) -> None:
    if _LIMIT.search(label):
        return
    m = _COUNT.match(text, v0, le)
    if m:
        out.append(Candidate("state", v0, m.end(), HIGH, "quantity"))


def _user_field(text: str, ls: int, label: str, v0: int, value: str, out: list[Candidate]) -> None:
    if _PREFERENCE.search(label):
        return
    words = label.split()
    if len(words) > 5:
        return
    if not _PART.search(label):  # "User:", "Current user:" alone: a name, nothing else
        if not _BARE.match(label.strip()):
            return  # "Customer support:", "User guide:": a topic, not the user
        m = _EMAIL_OR_NAME.fullmatch(value)
        if (
            not m
            or not (value[0].isupper() or "@" in value)
            or _GREETING.match(value)
            or _in_dialogue(text, ls)
        ):
            return
        out.append(Candidate("state", v0, v0 + len(value), HIGH, "user", f"{label.strip()}:"))
        return
    m = _PLAIN.match(text, v0, v0 + len(value))
    if m and m.end() == v0 + len(value) and len(value) <= 60 and not _IMPERATIVE.match(value):
        out.append(Candidate("state", v0, m.end(), HIGH, "user", f"{label.strip()}:"))  # not "Always ask"


def _in_dialogue(text: str, ls: int) -> bool:
    """A ``User:`` line next to another speaker's line: a transcript, not a field."""
    before = text.rfind("\n", 0, max(0, ls - 1)) + 1
    nxt = text.find("\n", ls)
    after_end = text.find("\n", nxt + 1) if nxt >= 0 else -1
    around = text[before:ls] + (
        text[nxt + 1 : after_end if after_end >= 0 else len(text)] if nxt >= 0 else ""
    )
    return bool(_DIALOGUE_LINE.search(around))


def _under_heading(text: str, at: int, heading: str, out: list[Candidate]) -> int:
    """The ``key: value`` lines, or the memory list, right under a heading about the user;
    returns where they end. Up to two lines of prose (a note) may come between."""
    pos, prose, items = at, 0, []
    while pos < len(text):
        nl = text.find("\n", pos + 1)
        nl = len(text) if nl < 0 else nl
        line = text[pos + 1 : nl]
        if not line.strip():
            if items or prose:
                break
            pos = nl
            continue
        item = _ITEM.match(line)
        kv = _LINE.match(line)
        if _SIGILS.search(line):
            return pos  # a template's own slots: the slot rules read them
        if kv and _PREFERENCE.search(kv.group("label")):
            pass  # "- Plan: Pro", "- Language: de": a setting of the account, not who the user is
        elif item and not _IMPERATIVE.match(item.group("body")) and not (kv and _plain_field(line, kv)):
            items.append((pos + 1 + item.start("body"), nl))
        elif kv and _plain_field(line, kv):
            v0 = pos + 1 + kv.start("value")
            out.append(
                Candidate(
                    "state", v0, pos + 1 + len(line.rstrip()), HIGH, "user", f"{kv.group('label').strip()}:"
                )
            )
            prose = 2
        elif items or prose >= 2 or line.lstrip().startswith("#"):
            break
        else:
            prose += 1
        pos = nl
    if items:
        out.append(Candidate("state", items[0][0], items[-1][1], MEDIUM, "user", heading.strip(" #*:")))
        return items[-1][1]
    return pos


def _plain_field(line: str, kv: re.Match) -> bool:
    value = kv.group("value").strip()
    return (
        bool(value)
        and value[0] not in "{$<[%`"
        and len(kv.group("label").split()) <= 4
        and not _PREFERENCE.search(kv.group("label"))
        and bool(_PLAIN.fullmatch(value))
    )
