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
from analyzer.detection import elided, gitstate, given, keptmemory, slotreadings, vocab, whereabouts
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
RANGE_BOUNDS = {"start", "end", "begin", "from", "to", "since", "until"}
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
    r"|information|details|facts|data|memory|memories|context)\b|\bwhat (?:you|we) know about (?:the |this )?user\b|^\W*about (?:the |this )?user\W*$|^\W*(?:the )?current (?:user|customer)\W*$"
    r"|\b(?:infos?|informationen|fakten|wissen)\s+über\s+(?:den|die)\s+(?:user|nutzer|benutzer)\b"
    r"|\b(?:infos?|informations|faits) sur l'utilisateur|\b(?:información|datos|hechos) (?:sobre el|del) usuario"
    r"|关于用户的(?:信息|资料|事实)|用户(?:信息|画像|资料|档案)|ユーザー(?:情報|プロフィール)|사용자 정보"
)
#: a heading over this conversation's surroundings ("Information about your environment:", "About this chat:")
_SESSION_HEADING = re.compile(
    r"(?i)\b(?:infos?|information|details|facts|context|data)\b[^\n:]{0,20}?\b(?:about|on|of|regarding)\s+"
    r"(?:your|the|this)\s+(?:current\s+)?(?:environment|conversation|chat|session|server|channel|room|group|call)\b"
    r"|^\W*about (?:this|the current) (?:conversation|chat|session|server|channel)\W*$"
)
#: a slot named for the working copy ("{branch}", "${status}") in a git line: read per request
_GIT_WORDS = re.compile(
    r"(?i)\b(?:git|repo(?:sitory)?|branch|commits?|working (?:tree|copy|directory)|HEAD)\b"
)
_GIT_SLOT_WORDS = vocab.GIT_PARTS | {"current", "head", "active", "name", "git", "commit", "sha", "diff"}
#: the words of calls that only turn a value into text (``strings.TrimSpace(string(b))``, ``str(b).strip()``)
_TEXT_WRAPPERS = frozenset(
    "strings string str trim space strip to bytes utf lossy from unwrap as ref".split()
)
#: a line of a block: a list item or a key and its value
_ITEM = re.compile(r"[ \t]*(?:[-*•][ \t]+|\d+\.[ \t]+|[\w ]{1,30}[:：][ \t]*\S)")
_PERIOD = re.compile(
    r"(?i)\b(?:last|past|previous|this|current)\s+(?:\d+\s+)?(?:weeks?|months?|quarters?|years?|days|hours)\b"
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
#: a slot named for a place in the file system ("{current_dir}", "${cwd}")
_FILE_PLACES = frozenset("dir dirs directory cwd pwd path folder workdir workspace root".split())
_WORKDIR = re.compile(
    r"(?i)working directory|\bcwd\b|工作目录|当前目录|作業ディレクトリ|作業フォルダ|작업 디렉터리|arbeitsverzeichnis|répertoire de travail|directorio de trabajo"
)
#: a label ending in one of these makes the slot its object ("the time in {city}")
_PREPOSITIONS = frozenset("in at for of near from to on".split())
_SLOT_KEYS = frozenset(("session",))
#: how many characters of a token with no spaces in it (CJK) make its key
_CJK_KEY = 12


def labelled(text: str, c: Candidate, w: Around) -> str | None:
    """Why a slot of no telling name (or a blank) is volatile by the words around it, or None."""
    if content(c.expr) or given.content(text, c.expr, w.memo):
        return None
    ws = set(words(c.expr))
    if under_user_heading(text, c.start) and not ws & PREFERENCES:
        return "a line of a block about the user"
    if keptmemory.under_memory_heading(text, c.start, c.end):
        return f"{vocab.MEMORY_BLOCK}, under its heading"
    if _YOU_ARE_IN.search(w.label) and w.label.rstrip(" #@").endswith((":", "called", "named", " is")):
        return f"where this conversation is: {w.labelled}"
    if under_user_heading(text, c.start, _SESSION_HEADING, gap=True):
        return "a line of a block about this conversation's surroundings"
    if git_slot(c.expr, w.label) or (
        not w.label.strip() and git_slot(c.expr, header_above(text, c.start, c.end))
    ):
        return f"the working copy's state: {w.labelled if w.label.strip() else 'under its header'}"
    if why := gitstate.labelled_slot(c.expr, w.label) or elided.by_label(c.expr, w.label):
        return why
    if why := slotreadings.reading(text, c.start, c.end, w.near):
        return why
    counted = re.match(r"\s?[^\W\d_]", text[c.end : c.end + 3])  # "{n} people", "{n}명": a count of things
    if ws and ws <= _COUNT_NAMES and counted and not w.near.rstrip(" *_`'\"").endswith((":", "=", "：")):
        return None  # "{n} celebrities born today": how many the template asks for (a "key: {n}" line is read on)
    if ws & _FILE_PLACES or _WORKDIR.search(w.near):
        return None  # the working directory or a path: where the deployment runs, not when
    if whereabouts.user_at(w.near):
        return f"where the user is now: {w.labelled}"
    tokens = w.near.split()
    if tokens and tokens[-1].lower() in _PREPOSITIONS:
        return None  # "the current time in {city}": the place asked about, not the time
    start = max(0, len(tokens) - 3)  # the slot's own key: "Current date:", "Session:"
    # "bytes per conversation at batch {x}" is a rate, not a conversation's; "Current model:
    # {x}" names a setting ("current" alone is no clock)
    kept = [
        t
        if t.isascii()
        else t[-_CJK_KEY:]  # a clause of CJK is one token: its key is its end ("…当前时间：")
        for i, t in enumerate(tokens[start:], start)
        if not (i and tokens[i - 1].lower() in ("per", "each", "every"))
    ]
    key = _classes(" ".join(kept), w.memo)
    now = _classes(" ".join(t for t in now_words(kept) if t.lower().strip(":=-,()") not in _CURRENT), w.memo)
    near = w.near
    if not near.strip() and w.label.rstrip().endswith("("):  # "the user's timezone ({tz})": the words before
        near = cx.clause(w.label.rstrip()[:-1])
    user = "user" in _classes(near, w.memo)
    return w.labelled if ("now" in now and "static" not in key) or key & _SLOT_KEYS or user else None


def _classes(words: str, memo: dict) -> frozenset[str]:
    """:func:`.context.word_classes` of ``words``, kept in this call's memo (a pure function of the
    string: the same words give the same classes; slot keys repeat in a prompt)."""
    got = memo.get(("word-classes", words))
    if got is None:
        got = memo[("word-classes", words)] = cx.word_classes(words)
    return got


_COUNT_NAMES = frozenset("n num count number limit k top_k top size amount length len".split())
#: first words that name no owner of their own ("current_time", "user_id", "last_login")
_NO_OWNER = vocab.TIME | vocab.DATE | vocab.STATE | vocab.USER | vocab.RANDOM | vocab.MEMORY | CONTENT
_NO_OWNER |= {
    "current",
    "last",
    "next",
    "this",
    "prev",
    "previous",
    "new",
    "old",
    "total",
    "get",
    "is",
    "has",
}


def state_owners(cands: list[Candidate]) -> dict[str, str]:
    """The owners of slots volatile by name: ``itinerary`` of ``{itinerary_datetime}``, per owner
    the first such slot. An owner whose clock is rendered per session renders the rest of its state
    too (``{itinerary_start_date}``, ``{itinerary}``: :func:`family`)."""
    out: dict[str, str] = {}
    for c in cands:
        if c.kind == "placeholder" and c.shape.startswith("named `") and "." not in c.expr:
            ws = words(c.expr)
            if len(ws) >= 2 and len(ws[0]) >= 3 and ws[0] not in _NO_OWNER:
                out.setdefault(ws[0], c.expr)
    return out


def family(expr: str, owners: dict[str, str]) -> str | None:
    """The sibling slot of ``expr`` in ``owners`` when ``expr`` is that owner itself or the bound of
    its period (``{itinerary}``, ``{itinerary_start_date}``), else None."""
    if not owners:
        return None
    ws = words(expr)
    if not ws or ws[0] not in owners or owners[ws[0]] == expr:
        return None
    return owners[ws[0]] if len(ws) == 1 or range_bound(expr) else None


def header_above(text: str, start: int, end: int) -> str:
    """The line above a slot alone on its line when it is a short header ("Recent commits:"), else ""."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    if ls == 0 or text[ls:start].strip() or text[end : len(text) if le < 0 else le].strip():
        return ""
    header = text[text.rfind("\n", 0, ls - 1) + 1 : ls - 1].strip()
    return header if len(header) <= 40 and header.endswith((":", "：")) else ""


def git_slot(expr: str, label: str) -> bool:
    """A slot named only for the working copy (``{branch}``, ``${status}``) after a label about git
    ("The current branch is", "Git status:"): read from the repository per request."""
    ws = set(words(expr)) - _TEXT_WRAPPERS  # strings.TrimSpace(string(branch)): the branch
    return bool(ws & vocab.GIT_PARTS and ws <= _GIT_SLOT_WORDS and _GIT_WORDS.search(label))


def under_user_heading(
    text: str, start: int, heading: re.Pattern[str] = _USER_HEADING, gap: bool = False
) -> bool:
    """The slot's line belongs to a run of list or key lines under a heading about the user (or
    another ``heading``); one blank line may stand right under a Markdown heading, and with ``gap``
    under any heading (a section's)."""
    ls = text.rfind("\n", 0, start) + 1
    if not _ITEM.match(text, ls):
        return False
    at = ls
    for _ in range(_HEADING_REACH):
        if at == 0:
            return False
        prev = text.rfind("\n", 0, at - 1) + 1
        line = text[prev : at - 1]
        if not line.strip():  # one blank line under a Markdown heading, or under a "…:" heading with ``gap``
            above = text[text.rfind("\n", 0, max(0, prev - 1)) + 1 : max(0, prev - 1)].rstrip()
            marked = above.lstrip().startswith("#") or (gap and above.endswith((":", "：")))
            return prev > 0 and marked and bool(heading.search(above))
        if not _ITEM.match(line) or line.rstrip().endswith((":", "：")):
            return bool(heading.search(line))
        at = prev
    return False


def in_period(text: str, start: int, end: int) -> bool:
    """The slot's line names a period counted back from today."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    return bool(_PERIOD.search(text, ls, le if le >= 0 else len(text)))


#: why a period's bound is volatile (judge, code slots); the rewrite moves what this reason opens
BOUND_REASON = "the bound of a period counted back from today"


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


#: what may stand between the parts of one place ("{city_name} City, {pref_name}", "{country} {flag}")
_PLACE_GOES_ON = re.compile(r"(?:[ \t]+[A-Z][a-z]{1,12})?[ \t]*,?[ \t]*")


def place_goes_on(text: str, kept: Candidate, c: Candidate, memo: dict) -> bool:
    """The slot ``c`` right after the kept place slot ``kept`` is the rest of that place, unless it
    carries content ("located in {city}, {question}")."""
    return bool(_PLACE_GOES_ON.fullmatch(text, kept.end, c.start)) and not (
        content(c.expr) or given.content(text, c.expr, memo)
    )
