"""Slots naming a field of the person served: ``{user.age}``, ``<%= guest.room %>``, ``{{system__caller_id}}``.

:func:`owned_field` reads a dotted name whose owner object is the current user, customer, guest,
caller, member, patient, student, client, visitor or profile: its profile and identity fields
(name, age, weight, room, checkout date, goal …) are filled per user. Their tier, role, plan,
permissions, status and preferences (language, units …) are per role or settings, never flagged.
:func:`owned_id` reads a plain name joining such an owner and an id, phone or e-mail
(``caller_id``, ``customer_phone``) or a person served and their name or profile (``{customer_name}``,
``{player_name}``, ``{nome_cliente}``).

:func:`record_moment` reads a record's own date or time field (``event.date``, ``reservation.time``);
:func:`sender` reads who sent the message answered (``message.author``); :func:`fixed_field` reads a record's field holding the request's content (``session.content``) or a
field of the deployment's business (``hospitalInfo.location``).

It does NOT read labels, nor judge the owner alone (``{user}``) or a record's field (``author.name``).
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer.detection import vocab

#: objects that stand for the person this request serves
OWNERS = {"user", "customer", "guest", "caller", "member", "patient", "student", "client", "visitor"}
OWNERS |= {"profile", "me", "subscriber", "learner", "attendee", "contact"}  # not a tenant: a company
#: … in Portuguese, Spanish, Italian, French, German and Indonesian ("perfil['nome']", "kunde.name")
OWNERS |= {"perfil", "profil", "profilo", "usuario", "cliente", "utilisateur", "kunde", "benutzer", "nutzer"}
OWNERS |= {"paciente", "pengguna", "pelanggan"}
#: owners that are also a tree's nodes or a ranked answer: only a person's fields make them the person
_TREE_WORDS = {"child", "kid", "candidate", "applicant"}
_PERSON_FIELDS = set(
    "name firstname lastname fullname nickname age grade school email phone gender birthday".split()
)
#: … and the child, student or candidate a tutor or a recruiter serves ("child.name", "cand_info.candidate_name")
OWNERS |= {"child", "kid", "candidate", "applicant", "mahasiswa", "siswa", "alumno", "aluno", "estudiante"}
#: words of an owner's name besides the owner ("current_user", "loggedInUser")
_OWNER_MODS = {"current", "this", "logged", "in", "active", "auth", "authenticated", "the", "my"}
#: … or naming the object that holds it ("user_class_instance", "userObj", "userRecord", "userInfo")
_OWNER_MODS |= {
    "class",
    "instance",
    "obj",
    "object",
    "info",
    "data",
    "record",
    "model",
    "entity",
    "details",
    "app",
}
#: fields that are per role or a setting, not who the person is; preferences (as in LABELS.md)
_NOT_PER_USER = {"plan", "plans", "tier", "role", "roles", "permission", "permissions", "perms", "scope"}
_NOT_PER_USER |= {"scopes", "access", "group", "groups", "type", "kind", "status", "subscription", "level"}
_NOT_PER_USER |= {"preferences", "preference", "prefs", "settings", "setting", "config", "is", "has", "can"}
_NOT_PER_USER |= {"language", "lang", "locale", "currency", "verbosity", "tone", "style", "theme"}
#: … and what the person sends: the request's content ("user.message", "customer.query")
_NOT_PER_USER |= {"input", "question", "query", "message", "messages", "history", "content", "text", "prompt"}
_NOT_PER_USER |= vocab.SETTING - {"tz", "zone", "timezone"}  # the user's own zone is theirs (LABELS.md)
#: a collection's size (``users.length``), not a field
_SIZES = {"count", "length", "size", "__class__"}
#: identity parts joined to an owner in one plain name ("caller_id", "customer_phone")
_ID_PARTS = {"id", "phone", "number", "email", "mail"}
#: the people served by name or by a block about them ("customer_name", "patient_info"): per user, as
#: the corpus labels them (a persona's name is the assistant's: "agent_name", "bot_name")
_PERSONS = {
    "customer",
    "client",
    "patient",
    "guest",
    "caller",
    "member",
    "student",
    "player",
    "lead",
    "buyer",
    "child",
    "kid",
    "candidate",
    "applicant",
}
_NAMED_PARTS = {"name", "fullname", "firstname", "lastname", "surname", "profile", "info", "details"}
_NAME_LEADS = {"full", "first", "last", "given", "family"}
#: Spanish, Portuguese, Italian and French write the name first ("nome_cliente", "nombre_paciente")
_NAMES_BEFORE = {"nome", "nombre", "nom"}
_ROMANCE_PERSONS = {"cliente", "paciente", "usuario", "usuário", "utente", "huesped", "aluno", "alumno"}
#: an id owner that names an app's credential ("client_id" of an OAuth app), not a person
_APP_OWNERS = {"client", "tenant", "contact", "me", "profile"}


def owned_field(name: str, words: Callable[[str], list[str]]) -> str | None:
    """The owner segment of ``user.first_name``, ``request.user.email``, ``guest.checkout_on`` (a
    field of the person served), or None; ``words`` splits a segment into its words."""
    parts = [p.strip() for p in name.split(".")]
    if len(parts) < 2 or parts[-1] in _SIZES or not parts[-1]:
        return None
    split = [set(words(p)) for p in parts]
    if split[0] & vocab.CONFIG:
        return None  # settings.user.name: a setting of the app
    k = next((i for i, ws in enumerate(split[:-1]) if ws & OWNERS and ws <= OWNERS | _OWNER_MODS), -1)
    if k < 0 or any(ws & _NOT_PER_USER for ws in split[k + 1 :]):
        return None
    if split[k] & _TREE_WORDS and not split[-1] & _PERSON_FIELDS:
        return None  # child.title, candidate.score: a tree's node, a ranked answer; child.name is a person's
    return parts[k]


def owned_id(ws: list[str]) -> bool:
    """A plain name's words join a person owner and an identity part (``system__caller_id``,
    ``customer_name``, ``patient_info``, ``nome_cliente``); the user's own (``user_id``) are
    :mod:`.names`' own rule."""
    for i, w in enumerate(ws[:-1]):
        nxt = ws[i + 1]
        if w in OWNERS - _APP_OWNERS - vocab.USER and nxt in _ID_PARTS:
            return True
        if w in _PERSONS and (nxt in _NAMED_PARTS or (nxt in _NAME_LEADS and ws[i + 2 : i + 3] == ["name"])):
            return True  # customer_name, player_full_name, client_profile
        if w in _NAMES_BEFORE and nxt in _PERSONS | _ROMANCE_PERSONS:
            return True  # nome_cliente, nombre_paciente
    return False


#: words of a live value, whoever owns it: a moment, today, an id or a session
_LIVE_WORDS = vocab.TIME | vocab.DATE | vocab.TODAY | {"id", "session", "started", "at"}
#: the assistant itself: its persona's fields are configuration
_PERSONA = {"assistant", "bot", "agent", "persona"}
#: an owner that is the deployment's configuration (not a call's options: ``opts.chatId`` is per request)
_CONFIGURATION = vocab.CONFIG - {"opts", "options", "prefs", "env", "environment"}


def fixed_field(name: str, words: Callable[[str], list[str]]) -> bool:
    """``session.content``, ``msg.text``: a record's last field holds the request's own content;
    ``hospitalInfo.location``, ``restaurant.hours``: a field of the business the deployment serves for;
    ``config.settings.timezone``: of its configuration."""
    owner, last = name.rsplit(".", 1)
    own, whose = words(last), set(words(owner))
    if whose & (vocab.TIME | vocab.DATE | vocab.TODAY):
        return False  # now.text, today.message: the moment's own text
    if set(own) & _LIVE_WORDS and not (own and own[0] in vocab.FLAG_LEADS):
        return False  # config.today, ctx.bot_started_at, app_config.session_id: live values (not a flag)
    if own and own[0] in vocab.BUSINESS | _PERSONA:
        return True  # session.extra.company_contact, ctx.assistant_tone: the business's or the persona's own
    if bool(own) and set(own) <= vocab.CONTENT_FIELDS:
        return True
    return bool(whose & vocab.BUSINESS) or bool(whose & _CONFIGURATION and not whose & vocab.USER)


#: the message or event a request answers, and its sender's field ("message.author", "ctx.author")
_MESSAGES = frozenset("message msg interaction ctx event update".split())
_SENDERS = frozenset("author sender from_user member".split())


def sender(name: str) -> bool:
    """``message.author`` (Discord), ``update.message.from_user`` (Telegram), or a field of theirs
    (``message.author.id``): who sent it."""
    parts = [p.strip().rstrip("?") for p in name.split(".")]  # message.author?.id
    return any(a.lower() in _MESSAGES and b.lower() in _SENDERS for a, b in zip(parts, parts[1:]))


#: owners whose date field may be today's ("self.date", "ctx.day", "state.month")
_NOW_OWNERS = frozenset("self this ctx context state session env now current today req request".split())


def record_moment(name: str, ws: list[str], field: bool, words: Callable[[str], list[str]]) -> bool:
    """A record's own date or time field (``track.Year``, ``event.date``, ``reservation.time``), or a
    field named ``date``."""
    if "." not in name:
        return field and set(ws) <= vocab.DATE_PARTS
    owner, last = name.rsplit(".", 1)
    own = set(words(last))
    return own <= vocab.DATE_PARTS | vocab.TIME_PARTS and not set(words(owner)) & _NOW_OWNERS


#: a conversation variable holding the chat's own content ("History", "chat_messages")
_CONVERSATION_CONTENT = vocab.CONTENT_FIELDS | {
    "history",
    "chat",
    "context",
    "summary",
    "dialogue",
    "transcript",
}


def dify_state(expr: str, words: Callable[[str], list[str]]) -> bool:
    """``conversation.cv_slots``: a Dify conversation variable, state kept per session (not its history)."""
    owner, _, field = expr.partition(".")
    return owner == "conversation" and bool(field) and not set(words(field)) & _CONVERSATION_CONTENT
