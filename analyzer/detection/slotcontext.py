"""Why a slot of no telling name (or a collector's blank) is volatile by the lines around it.

:func:`labelled` reads, in turn: a content slot (never); a block headed as the user's own facts
("Known facts about the user:", :func:`under_user_heading`); "the server you are in"; a "now" label
(event words that modify a noun, "Generated answer:", left out: :func:`now_words`) or a session
or user key. :func:`in_period` tells a ``{start_date}`` on a line naming
a period counted back from today ("last week", "지난 주", "上周").

It does NOT judge named slots, keep state or read more than a few lines (:mod:`.judge` calls it).
"""

from __future__ import annotations

import re

from analyzer.detection import context as cx
from analyzer.detection import vocab
from analyzer.detection.around import Around
from analyzer.detection.candidate import Candidate
from analyzer.detection.names import words

#: a slot carrying the request's own content ("{question}", "{chat_history}"): never volatile by its label
CONTENT = {"input", "question", "query", "context", "message", "messages", "history", "content", "text"}
CONTENT |= {
    "prompt",
    "documents",
    "docs",
    "results",
    "answer",
    "response",
    "reply",
    "transcript",
    "topic",
    "task",
}
#: the bounds of a period ("start_date", "date_to"): a stored range unless counted back from today
RANGE_BOUNDS = {"start", "end", "begin", "from", "to"}
#: event words that label a moment only on their own ("Generated:", "Sent at:"), not "Generated answer:"
PARTICIPLES = {"sent", "received", "logged", "requested", "generated", "rendered", "started", "created"}
PARTICIPLES |= {"fetched", "retrieved"}
#: … or before one of these
MOMENT_NOUNS = {"at", "on", "date", "time", "timestamp", "ts", "datetime", "when"}
#: a user's preferences are settings, not who or where they are ("{language}", "{units}")
PREFERENCES = {
    "language",
    "lang",
    "locale",
    "units",
    "unit",
    "currency",
    "verbosity",
    "tone",
    "style",
    "theme",
}
#: a heading over the user's own facts ("Known facts about the user:", "User profile:", "关于用户的信息")
_USER_HEADING = re.compile(
    r"(?i)\b(?:facts?|infos?|information|details|data|memor(?:y|ies)|known|everything)\b[^\n:]{0,20}?\b(?:about|on|of"
    r"|regarding)\s+(?:the |this |our )?user\b|\b(?:user|customer|member|patient)(?:'s)?[ _-]?(?:profile|info"
    r"|information|details|facts|data|memory|memories|context)\b|\bwhat (?:you|we) know about (?:the |this )?user\b|^\W*about (?:the |this )?user\W*$"
    r"|\b(?:infos?|informationen|fakten|wissen)\s+über\s+(?:den|die)\s+(?:user|nutzer|benutzer)\b"
    r"|\b(?:infos?|informations|faits) sur l'utilisateur|\b(?:información|datos|hechos) (?:sobre el|del) usuario"
    r"|关于用户的(?:信息|资料|事实)|用户(?:信息|画像|资料|档案)|ユーザー(?:情報|プロフィール)|사용자 정보"
)
#: a line of a block: a list item or a key and its value
_ITEM = re.compile(r"[ \t]*(?:[-*•][ \t]+|\d+\.[ \t]+|[\w ]{1,30}[:：][ \t]*\S)")
_PERIOD = re.compile(
    r"(?i)\b(?:last|past|previous|this|current)\s+(?:\d+\s+)?(?:weeks?|months?|quarters?|years?|days)\b"
    r"|\b(?:letzte[nr]?|vergangene[nr]?|diese[rn]?)\s+(?:woche|monat)|semaine derni[eè]re|cette semaine"
    r"|mois dernier|semana pasada|esta semana|mes pasado|지난\s?(?:주|달)|이번\s?(?:주|달)|최근\s?\d+\s?일"
    r"|上周|本周|上个?月|本月|上星期|本星期|(?:近|过去)\d+天|先週|今週|先月|今月"
)
_HEADING_REACH = 8
#: "The server you are in is called:", "the channel you're currently in": where this conversation is
_YOU_ARE_IN = re.compile(
    r"(?i)\byou(?: are|'re)(?: currently| now)? in\b(?! (?:charge|control|a position|the role|the mood)\b)"
)
_CURRENT = frozenset(("current", "currently"))
_SLOT_KEYS = frozenset(("session",))


def labelled(text: str, c: Candidate, w: Around) -> str | None:
    """Why a slot of no telling name (or a blank) is volatile by the words around it, or None."""
    if content(c.expr):
        return None
    if under_user_heading(text, c.start) and not set(words(c.expr)) & PREFERENCES:
        return "a line of a block about the user"
    if _YOU_ARE_IN.search(w.label) and w.label.rstrip(" #@").endswith((":", "called", "named", " is")):
        return f"where this conversation is: {w.labelled}"
    tokens = w.near.split()
    start = max(0, len(tokens) - 3)  # the slot's own key: "Current date:", "Session:"
    # "bytes per conversation at batch {x}" is a rate, not a conversation's; "Current model:
    # {x}" names a setting ("current" alone is no clock)
    kept = [
        t
        for i, t in enumerate(tokens[start:], start)
        if not (i and tokens[i - 1].lower() in ("per", "each", "every"))
    ]
    key = cx.word_classes(" ".join(kept))
    now = cx.word_classes(" ".join(t for t in now_words(kept) if t.lower().strip(":=-,()") not in _CURRENT))
    user = "user" in cx.word_classes(w.near)
    return w.labelled if ("now" in now and "static" not in key) or key & _SLOT_KEYS or user else None


def under_user_heading(text: str, start: int) -> bool:
    """The slot's line belongs to a run of list or key lines under a heading about the user."""
    ls = text.rfind("\n", 0, start) + 1
    if not _ITEM.match(text, ls):
        return False
    at = ls
    for _ in range(_HEADING_REACH):
        if at == 0:
            return False
        prev = text.rfind("\n", 0, at - 1) + 1
        line = text[prev : at - 1]
        if not line.strip():
            return False
        if not _ITEM.match(line) or line.rstrip().endswith((":", "：")):
            return bool(_USER_HEADING.search(line))
        at = prev
    return False


def in_period(text: str, start: int, end: int) -> bool:
    """The slot's line names a period counted back from today."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    return bool(_PERIOD.search(text, ls, le if le >= 0 else len(text)))


def range_bound(expr: str) -> bool:
    """The slot names the start or end of a period by date (``start_date``, ``date_to``, ``end_day``)."""
    ws = set(words(expr))
    return bool(ws & RANGE_BOUNDS and ws & vocab.DATE)


def content(expr: str) -> bool:
    """The slot carries the request's own content (``{question}``, ``{{ chat_history }}``)."""
    return bool(set(words(expr)) & CONTENT)


def now_words(tokens: list[str]) -> list[str]:
    """``tokens`` less the event words that modify a noun after them ("Generated answer:")."""
    out = []
    for i, t in enumerate(tokens):
        bare = t.lower().strip(":=-,()")
        nxt = tokens[i + 1].lower().strip(":=-,()") if i + 1 < len(tokens) else ""
        if bare in PARTICIPLES and nxt and nxt not in MOMENT_NOUNS:
            continue
        out.append(t)
    return out
