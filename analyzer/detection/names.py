"""Is a template slot or a code expression volatile by what it names or calls?

A slot (``{{ user_session }}``, ``{turn_count}``) is volatile by its *name*, split into words
(``lastLoginDateStr`` → last, login, date, str) looked up in small vocabularies; an
interpolation (``${new Date().toISOString()}``) by what it *calls*, matched by dotted name.
:func:`judge` takes an expression's identifiers and calls (from ``ast``, tree-sitter or
:func:`expression_parts`) and returns a :class:`Verdict` or None.

It does NOT flag content slots (``{input}``, ``{context}``) or time settings (``time_limit``,
``timezone``), nor read the text around a slot (see :mod:`.context`). The word sets live in :mod:`.vocab`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.detection import owners, vocab
from analyzer.detection.candidate import HIGH, MEDIUM
from analyzer.detection.conversation_size import conversation_size
from analyzer.detection.fromtoday import from_today

__all__ = ["HIGH", "MEDIUM", "Verdict", "call_verdict", "config_container", "expression_parts", "is_setting"]
__all__ += ["judge", "judge_expression", "words"]


@dataclass(frozen=True, slots=True)
class Verdict:
    #: why it is volatile, for the finding ("calls `new Date()`")
    reason: str
    severity: str


_FROM_TODAY = "counted from today's date"
_DOT_SPACE = re.compile(r"\s*\.\s*")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STRING_LIT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: a lookup by key names the value as an identifier would: ctx['user_id'], msg.get("person_id")
_KEY = re.compile(r"(?:\[\s*|\.get\(\s*)(['\"])([A-Za-z_]\w*)\1")
#: the container a key is looked up in: the identifier chain right before ``[`` or ``.get(``
_OWNER = re.compile(r"([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)(?:\s*\[[^\[\]]*\])*\s*\Z")
_IDENT = re.compile(r"(new\s+)?([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)(\s*\(\s*\))?(\s*\()?")


#: a block about the run's surroundings ("getEnvironmentInfo", "envDetails", "workspaceMetadata")
_ENV_OWNERS = frozenset(("env", "environment", "workspace"))
_BLOCK_PARTS = frozenset(("info", "details", "metadata", "context", "snapshot"))


def words(name: str) -> list[str]:
    """``lastLoginDateStr`` → ["last", "login", "date", "str"]; ``REMAINING_QUOTA`` → ["remaining", "quota"]."""
    return [w for part in _WORD.findall(name) for w in vocab.JOINED.get(part.lower(), (part.lower(),))]


def config_container(owner: str) -> bool:
    """A key looked up in ``owner`` names a setting: ``settings``, ``self.config``, ``os.environ``."""
    return bool(set(words(owner)) & vocab.CONFIG)


def _keys(expr: str) -> list[str]:
    """The string keys looked up in ``expr`` (``ctx['user_id']``), less those of configuration containers."""
    out = []
    for m in _KEY.finditer(expr):
        owner = _OWNER.search(expr, 0, m.start())
        if not (owner and config_container(owner.group(1))):
            field = f"{owner.group(1)}.{m.group(2)}" if owner else ""
            out.append(field if field and owners.owned_field(field, words) else m.group(2))  # profile['name']
    return out


def person_name(name: str) -> bool:
    """``firstName``, ``last_name``, ``fullname``: the name of the person served."""
    ws = words(name)
    if len(ws) == 1:
        return ws[0] in vocab.PERSON_NAMES
    parts = set(ws[:-1]) - {"and"}  # "first_and_last_name"
    return 2 <= len(ws) <= 4 and ws[-1] == "name" and bool(parts) and parts <= vocab.NAME_PARTS


def name_verdict(name: str, field: bool = False) -> Verdict | None:
    """Whether a slot named ``name`` (``user_session``, ``turn_count``, ``CURRENT_DATE``) is filled per
    request. ``field``: ``name`` is a record's field (``author.first_name``), not the user's own."""
    ws = words(name)
    found = set(ws)
    if not field and "." not in name and person_name(name):
        return Verdict(f"named `{name}`: the person's own name, per user", HIGH)
    if "." in name and (owner := owners.owned_field(name, words)):
        return Verdict(f"named `{name}`: a field of the {owner} served, per user", HIGH)
    if "." in name and owners.sender(name):
        return Verdict(f"named `{name}`: the person who sent this message, per user", HIGH)
    if any(
        w in vocab.CHAT_PLACES
        and ws[i + 1] in vocab.CHAT_PLACE_PARTS
        and (not i or ws[i - 1] in _CHAT_OWNERS)
        for i, w in enumerate(ws[:-1])
    ):
        return Verdict(f"named `{name}`: where this conversation is held, per session", HIGH)
    if owners.owned_id(ws):
        return Verdict(f"named `{name}`: the {' '.join(ws[-2:])} of the person served", HIGH)
    if ws and ws[0] == "current" and vocab.WHERE.intersection(ws):
        return Verdict(f"named `{name}`: where the user is now", HIGH)
    if found & vocab.WHERE_OWNERS and found & vocab.WHERE and "locale" not in found:
        return Verdict(f"named `{name}`: where the request comes from", HIGH)
    own = set(words(name.rsplit(".", 1)[-1])) if "." in name else found  # a field's own name says so
    sender = "".join(ws) in vocab.SENDER_WORDS  # pushName: a messaging API's sender
    if (
        own & vocab.USER_WORDS
        or sender
        or (own & vocab.USER and own & vocab.USER_PARTS and "role" not in own)
    ):
        return Verdict(f"named `{name}`: the current user's own value", HIGH)
    if not ws or ws[0] in vocab.FLAG_LEADS or (found & vocab.SETTING and not found & vocab.READ_OVER_SETTING):
        return None
    if "." in name and owners.fixed_field(name, words):
        return None  # session.content: the request's own content; hospitalInfo.location: the business's
    if ws[-1] in vocab.TEXT_ABOUT or owners.record_moment(name, ws, field, words):
        return None  # "resolveRelativeTimeInstruction": text about the time; "track.Year": a record's date
    if from_today(ws):
        return Verdict(f"named `{name}`: {_FROM_TODAY}", MEDIUM)
    for i, w in enumerate(ws):
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if w == "id" and i and ws[i - 1] in vocab.ID_OWNERS:
            return Verdict(f"named `{name}`: a {ws[i - 1]} id", HIGH)
        if w == "last" and nxt in vocab.LAST_OF:
            return Verdict(f"named `{name}`: changes with each {nxt}", HIGH)
        if w == "left" and i and ws[i - 1].rstrip("s") in vocab.COUNTED | vocab.STATE:
            return Verdict(f"named `{name}`: counts down {ws[i - 1]}", HIGH)  # "steps_left", "attemptsLeft"
        if w in vocab.COUNTS and i and ws[i - 1] in vocab.COUNTED:
            return Verdict(f"named `{name}`: counts {ws[i - 1]}s so far", HIGH)
        if w == "at" and i and ws[i - 1] in vocab.EVENT_AT:
            return Verdict(f"named `{name}`: a {ws[i - 1]} timestamp", HIGH)
    if "recent" in found and found & vocab.RECENT_OF:
        return Verdict(f"named `{name}`: the user's recent activity, per session", HIGH)
    if found & vocab.RANDOM:
        return Verdict(f"named `{name}`: generated per request", HIGH)
    moment = own if "." in name else found  # a field's own words name a moment (judge() reads the owner too)
    event = found & vocab.MOMENT_OF and not found & vocab.TODAY  # start_time, not today_start
    if moment & vocab.TIME and not event:
        return Verdict(f"named `{name}`: a clock reading", HIGH)
    if moment & vocab.DATE and not event:
        return Verdict(f"named `{name}`: today's date", MEDIUM)
    if found & vocab.STATE or found & vocab.GAME_STATE:
        return Verdict(f"named `{name}`: per-request or per-session state", HIGH)
    if found & vocab.MEASURED and found & vocab.MEASURE_READS:
        return Verdict(f"named `{name}`: a quantity read per request", HIGH)
    if (own if "." in name else found) & vocab.MEMORY and not found & vocab.NOT_MEMORY_BLOCK:
        return Verdict(
            f"named `{name}`: {vocab.MEMORY_BLOCK}", HIGH
        )  # not memory_dir (judge() reads the owner too)
    if found & _ENV_OWNERS and own & _BLOCK_PARTS:  # the field itself is the block, not a workspace.name
        return Verdict(f"named `{name}`: an environment block rendered per session", HIGH)
    if found & vocab.RUNNING and found & vocab.RUNNING_OWNERS:
        return Verdict(f"named `{name}`: a running total of the session", HIGH)
    if "state" in found and found & vocab.STATE_OWNERS:
        return Verdict(f"named `{name}`: rendered application state", HIGH)
    if found & vocab.GIT_PARTS and found & (vocab.GIT | vocab.GIT_NOW) and not found & vocab.GIT_FIXED:
        return Verdict(f"named `{name}`: a snapshot of the working copy", HIGH)
    return None


#: what may stand before a chat place's name: the message, its context, the chat app
_CHAT_OWNERS = frozenset("current this the message msg ctx interaction event discord slack telegram".split())


def is_setting(expr: str) -> bool:
    """The expression names a setting (``timeZone``, ``max_tokens``, ``date_format``) or a stored
    moment (``receivedDate``): not a per-request value, whatever its label says."""
    names, calls = expression_parts(expr)
    return not calls and any(_fixed(set(words(n))) for n in names)


def _fixed(ws: set[str]) -> bool:
    """A setting, or a stored moment's date (``receivedDate``)."""
    return bool(ws & vocab.SETTING or (ws & vocab.MOMENT_OF and ws & vocab.DATE))


def call_verdict(dotted: str, n_args: int | None = None) -> Verdict | None:
    """Whether calling ``dotted`` (``datetime.now``, ``new Date``, ``crypto.randomUUID``) gives a fresh value."""
    dotted = _DOT_SPACE.sub(".", " ".join(dotted.split())).lstrip(".")
    last = dotted.rsplit(".", 1)[-1]
    if dotted == "new Date" and n_args not in (0, None):
        return None  # new Date(user.createdAt) is a given moment, not now
    ws = words(last)
    if (
        last in vocab.NOW_CALLS
        or (len(ws) > 1 and ws[-1] == "now" and ws[0] in ("get", "current", "local", "utc", "fetch"))
        or (
            "current" in ws[:2]
            and set(ws) & (vocab.TIME | vocab.DATE_PARTS)
            and not set(ws) & (vocab.MOMENT_OF | vocab.NOT_A_READING)
        )
        or dotted in vocab.NOW_DOTTED
        or dotted.startswith(("Temporal.Now", "new Date"))
    ):
        return Verdict(f"calls `{dotted}()`", HIGH)
    if from_today(ws, call=True):
        return Verdict(f"calls `{dotted}()`: {_FROM_TODAY}", MEDIUM)
    if dotted in ("random.Random", "random.SystemRandom"):
        return None  # a generator object: its draws are the values
    if (
        last in vocab.RANDOM_CALLS
        or dotted.startswith(("secrets.", "random.", "crypto.random"))
        or dotted == "Math.random"
    ):
        return Verdict(f"calls `{dotted}()`", HIGH)
    return None


def _zone_calls(calls: list[tuple[str, int | None]]) -> set[int]:
    """The calls of each chain ending in ``.tzname()`` / ``.utcoffset()`` (a zone, not a moment): given
    whole (``datetime.now.astimezone.tzname``) or call by call, chained ones dotted (``.astimezone``)."""
    out: set[int] = set()
    for i, (dotted, _) in enumerate(calls):
        if dotted.rsplit(".", 1)[-1] not in ("tzname", "utcoffset"):
            continue
        out.add(i)
        if dotted.startswith("."):
            j = i
            while j > 0 and calls[j][0].startswith("."):
                j -= 1
                out.add(j)
            continue
        parts = dotted.split(".")
        for k in range(1, len(parts)):
            level = ".".join(parts[:k])
            j = next((j for j, (d, _) in enumerate(calls) if d == level and j not in out), None)
            if j is not None:
                out.add(j)
    return out


def judge(names: list[str], calls: list[tuple[str, int | None]] = ()) -> Verdict | None:
    """The first reason an expression is volatile: a volatile call, else a volatile name.
    A time format alone (``{a.published:%Y-%m-%d}``) is not one: it formats a given moment."""
    zone = _zone_calls(calls)
    for i, (dotted, n_args) in enumerate(calls):
        v = None if i in zone else call_verdict(dotted, n_args)
        if v:
            return v
    if zone:
        return None  # datetime.now().astimezone().tzname(): the deployment's zone, not the moment
    if counted := conversation_size(names, calls, words):
        return Verdict(f"counts the conversation's {counted} so far", HIGH)
    best = None
    fields = {n.rsplit(".", 1)[-1] for n in names if "." in n}
    # session.content, hospitalInfo.location: a fixed field, so neither its owner nor its name alone says more
    quiet = {p for n in names if "." in n and owners.fixed_field(n, words) for p in n.split(".")}
    for name in names:
        if name in quiet:
            continue
        v = name_verdict(name, name in fields)
        if v and (best is None or (v.severity == HIGH and best.severity != HIGH)):
            best = v
    return best


def expression_parts(expr: str) -> tuple[list[str], list[tuple[str, int | None]]]:
    """Identifiers and calls of a template-language expression (Jinja, Handlebars, Go
    templates, Semantic Kernel, ERB): ``formatDate now``, ``now() | date('%H:%M')``."""
    names: list[str] = _keys(expr) if "'" in expr or '"' in expr else []
    bare = _STRING_LIT.sub("''", expr)
    calls: list[tuple[str, int | None]] = []
    for m in _IDENT.finditer(bare):
        dotted = "".join(m.group(2).split())
        if m.group(1):
            calls.append(("new " + dotted, 0 if m.group(3) else 1))
        elif m.group(3) or m.group(4):
            chained = bare[: m.start()].rstrip().endswith(".")  # now().tzname(): on the call before
            calls.append(("." * chained + dotted, 0 if m.group(3) else None))
        names.extend(dotted.split("."))
        if "." in dotted:
            names.append(dotted)  # user.name, requestHints.city: the owner's words with the field's
    return names, calls


#: objects that stand for the assistant's own persona: their names and nicknames are configuration
_PERSONAS = frozenset("character char bot assistant persona agent ai npc companion".split())
_ROOT = re.compile(r"\s*([A-Za-z_]\w*)")


def judge_expression(expr: str) -> Verdict | None:
    names, calls = expression_parts(expr)
    v = judge(names, calls)
    root = _ROOT.match(expr)
    if (
        v
        and root
        and set(words(root.group(1))) & _PERSONAS
        and ("per user" in v.reason or "user's own" in v.reason)
    ):
        if not any({w.lower() for w in _WORD.findall(n)} & vocab.USER for n in names):  # as written
            return None  # {character[platforms][wechat][nickname]}, {{bot.username}}: the persona's own name
    return v
