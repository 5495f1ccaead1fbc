"""Is a template slot or a code expression volatile by what it names or calls?

A slot (``{{ user_session }}``, ``{turn_count}``) is volatile by its *name*, split into words
(``lastLoginDateStr`` → last, login, date, str) looked up in small vocabularies; an
interpolation (``${new Date().toISOString()}``) by what it *calls*, matched by dotted name.
:func:`judge` takes an expression's identifiers and calls (from ``ast``, tree-sitter or
:func:`expression_parts`) and returns a :class:`Verdict` or None.

It does NOT flag content slots (``{input}``, ``{context}``) or time settings (``time_limit``,
``timezone``), nor read the text around a slot (see :mod:`.context`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HIGH, MEDIUM = "high", "medium"


@dataclass(frozen=True, slots=True)
class Verdict:
    #: why it is volatile, for the finding ("calls `new Date()`")
    reason: str
    severity: str


_TIME = {"now", "time", "timestamp", "datetime", "clock", "hour", "minute", "ts", "epoch", "utc", "tonight"}
_DATE = {"date", "today", "tomorrow", "yesterday", "day", "weekday", "dow", "month", "year"}
_RANDOM = {
    "uuid",
    "guid",
    "nonce",
    "random",
    "rand",
    "salt",
    "otp",
    "csrf",
    "jwt",
    "cookie",
    "ulid",
    "nanoid",
}
_STATE = {
    "session",
    "sess",
    "turn",
    "iteration",
    "attempt",
    "retry",
    "seq",
    "counter",
    "remaining",
    "quota",
    "balance",
    "credits",
    "elapsed",
    "uptime",
    "latency",
    "login",
    "ip",
    "weather",
    "location",
    "current",
    "unread",
    "cart",
}
_ID_OWNERS = {
    "request",
    "req",
    "session",
    "sess",
    "trace",
    "span",
    "correlation",
    "conversation",
    "thread",
    "chat",
    "run",
    "job",
    "message",
    "msg",
    "call",
    "transaction",
    "txn",
    "turn",
    "interaction",
    "event",
    "execution",
    "invocation",
    "task",
    "query",
    "response",
    "completion",
    "visit",
    "order",
    "ticket",
    "device",
}
_LAST_OF = {
    "login",
    "seen",
    "active",
    "activity",
    "visit",
    "message",
    "interaction",
    "order",
    "purchase",
    "sync",
}
_EVENT_AT = {
    "created",
    "updated",
    "sent",
    "received",
    "started",
    "logged",
    "requested",
    "generated",
    "issued",
    "expires",
}
_COUNTS = {"count", "number", "num", "index", "idx", "no"}
_COUNTED = {
    "dialogue",
    "message",
    "msg",
    "step",
    "round",
    "request",
    "conversation",
    "chat",
    "interaction",
    "reply",
    "call",
    "visit",
}
_SETTING = {
    "limit",
    "max",
    "min",
    "format",
    "fmt",
    "zone",
    "tz",
    "window",
    "unit",
    "units",
    "period",
    "interval",
    "budget",
    "out",
    "range",
    "pattern",
    "locale",
    "style",
    "policy",
    "template",
    "field",
    "column",
    "type",
    "kind",
    "label",
}

_NOW_CALLS = {
    "now",
    "utcnow",
    "today",
    "time_ns",
    "localtime",
    "gmtime",
    "ctime",
    "asctime",
    "monotonic",
    "perf_counter",
}
_NOW_DOTTED = {
    "time.time",
    "time.strftime",
    "Date",
    "moment",
    "dayjs",
    "DateTime.local",
    "DateTime.utc",
    "new Date",
}
_RANDOM_CALLS = {
    "uuid1",
    "uuid4",
    "uuid6",
    "uuid7",
    "uuidv4",
    "uuidv7",
    "v4",
    "v7",
    "randomUUID",
    "nanoid",
    "ulid",
    "cuid",
    "createId",
    "urandom",
    "token_hex",
    "token_urlsafe",
    "token_bytes",
    "getRandomValues",
    "randint",
    "randrange",
    "random",
    "randomBytes",
    "shortid",
    "generate_id",
    "gen_id",
}
_DOT_SPACE = re.compile(r"\s*\.\s*")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STRING_LIT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_IDENT = re.compile(r"(new\s+)?([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)(\s*\(\s*\))?(\s*\()?")


def words(name: str) -> list[str]:
    """``lastLoginDateStr`` → ["last", "login", "date", "str"]; ``REMAINING_QUOTA`` → ["remaining", "quota"]."""
    return [w.lower() for w in _WORD.findall(name)]


def name_verdict(name: str) -> Verdict | None:
    """Whether a slot named ``name`` (``user_session``, ``turn_count``, ``CURRENT_DATE``) is filled per request."""
    ws = words(name)
    if not ws or _SETTING.intersection(ws):
        return None
    found = set(ws)
    for i, w in enumerate(ws):
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if w == "id" and i and ws[i - 1] in _ID_OWNERS:
            return Verdict(f"named `{name}`: a {ws[i - 1]} id", HIGH)
        if w == "last" and nxt in _LAST_OF:
            return Verdict(f"named `{name}`: changes with each {nxt}", HIGH)
        if w in _COUNTS and i and ws[i - 1] in _COUNTED:
            return Verdict(f"named `{name}`: counts {ws[i - 1]}s so far", HIGH)
        if w == "at" and i and ws[i - 1] in _EVENT_AT:
            return Verdict(f"named `{name}`: a {ws[i - 1]} timestamp", HIGH)
    if found & _RANDOM:
        return Verdict(f"named `{name}`: generated per request", HIGH)
    if found & _TIME:
        return Verdict(f"named `{name}`: a clock reading", HIGH)
    if found & _DATE:
        return Verdict(f"named `{name}`: today's date", MEDIUM)
    if found & _STATE:
        return Verdict(f"named `{name}`: per-request or per-session state", HIGH)
    return None


def call_verdict(dotted: str, n_args: int | None = None) -> Verdict | None:
    """Whether calling ``dotted`` (``datetime.now``, ``new Date``, ``crypto.randomUUID``) gives a fresh value."""
    dotted = _DOT_SPACE.sub(".", " ".join(dotted.split()))
    last = dotted.rsplit(".", 1)[-1]
    if dotted == "new Date" and n_args not in (0, None):
        return None  # new Date(user.createdAt) is a given moment, not now
    if last in _NOW_CALLS or dotted in _NOW_DOTTED or dotted.startswith(("Temporal.Now", "new Date")):
        return Verdict(f"calls `{dotted}()`", HIGH)
    if dotted in ("random.Random", "random.SystemRandom"):
        return None  # a generator object: its draws are the values
    if (
        last in _RANDOM_CALLS
        or dotted.startswith(("secrets.", "random.", "crypto.random"))
        or dotted == "Math.random"
    ):
        return Verdict(f"calls `{dotted}()`", HIGH)
    return None


def judge(names: list[str], calls: list[tuple[str, int | None]] = ()) -> Verdict | None:
    """The first reason an expression is volatile: a volatile call, else a volatile name.
    A time format alone (``{a.published:%Y-%m-%d}``) is not one: it formats a given moment."""
    for dotted, n_args in calls:
        v = call_verdict(dotted, n_args)
        if v:
            return v
    best = None
    for name in names:
        v = name_verdict(name)
        if v and (best is None or (v.severity == HIGH and best.severity != HIGH)):
            best = v
    return best


def expression_parts(expr: str) -> tuple[list[str], list[tuple[str, int | None]]]:
    """Identifiers and calls of a template-language expression (Jinja, Handlebars, Go
    templates, Semantic Kernel, ERB): ``formatDate now``, ``now() | date('%H:%M')``."""
    bare = _STRING_LIT.sub("''", expr)
    names: list[str] = []
    calls: list[tuple[str, int | None]] = []
    for m in _IDENT.finditer(bare):
        dotted = "".join(m.group(2).split())
        if m.group(1):
            calls.append(("new " + dotted, 0 if m.group(3) else 1))
        elif m.group(3) or m.group(4):
            calls.append((dotted, 0 if m.group(3) else None))
        names.extend(dotted.split("."))
    return names, calls


def judge_expression(expr: str) -> Verdict | None:
    return judge(*expression_parts(expr))
