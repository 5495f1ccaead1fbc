"""The word and call vocabularies that say a template slot or an expression is volatile.

Sets of lower-case words (a slot's name split into words, :func:`.names.words`) and of call
names; :mod:`.names` combines them into verdicts.

It does NOT judge anything itself.
"""

from __future__ import annotations

TIME = {"now", "time", "timestamp", "datetime", "clock", "hour", "minute", "ts", "epoch", "utc", "tonight"}
TIME |= {"zeit", "uhrzeit", "jetzt", "hora", "heure", "ahora", "zeitpunkt", "sekunde"}
TIME |= {"agora", "maintenant", "adesso", "sekarang", "waktu"}
DATE = {"date", "today", "tomorrow", "yesterday", "day", "weekday", "dow", "week", "month", "year"}
#: a date's parts with no word for now: a record's own field ("track.Year", "event.date")
DATE_PARTS = {
    "date",
    "day",
    "weekday",
    "week",
    "month",
    "year",
    "dt",
    "dia",
    "semana",
    "ano",
    "giorno",
    "tanggal",
}
#: a call about the current moment that does not return it (sets, parses or formats it, its zone)
NOT_A_READING = {"set", "update", "parse", "is", "has", "format", "zone", "tz", "sales", "plan"}
#: a flag's first word: a setting that turns something on ("include_all_day", "show_date", "use_24h_time")
FLAG_LEADS = {
    "include",
    "show",
    "enable",
    "enabled",
    "disable",
    "use",
    "is",
    "has",
    "allow",
    "should",
    "hide",
}
#: the business a deployment serves for: its fields are configuration ("hospitalInfo.location")
BUSINESS = set(
    "hospital clinic restaurant company business store shop hotel org organization tenant brand".split()
)
BUSINESS |= set("office practice salon agency firm school merchant venue".split())
#: a record's field holding the request's own content (``session.content``, ``msg.text``)
CONTENT_FIELDS = set("content contents text message messages input query question prompt body".split())
#: a name's last word saying it holds text about its subject ("dateInstructions", "time_prompt")
TEXT_ABOUT = set("instruction instructions guide guidance rules hint hints description".split())
#: a topic named after time, not a reading of it ("time_management_tips")
TEXT_ABOUT |= {"management", "tips", "advice"}
DATE |= {"datum", "heute", "fecha", "hoy", "jour", "aujourdhui", "oggi", "hoje", "wochentag"}
#: … Portuguese, Spanish, Italian and Indonesian days, weeks, months and years ("diaSemana", "tanggal")
DATE |= {"dia", "semana", "ano", "giorno", "settimana", "tanggal", "hari", "tarih"}  # not "mes": mes_example
#: the part of the year or day a request falls in ("{season_ja}", "{daypart}")
DATE |= {"season", "daypart"}
RANDOM = {
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
STATE = set(
    "session sess turn iteration attempt retry seq counter remaining quota balance credits elapsed "
    "uptime latency login ip weather location latitude longitude lat lng lon geo geolocation unread "
    "cart battery".split()
)
#: the user's own agenda rendered each turn ("{{ calendar }}", "{todos}", "{reminders}"): schedule status
STATE |= {"calendar", "agenda", "todos", "todo", "reminders"}
#: a game's or a companion's state rendered each turn ("{equipped}", "{affinity}", "{npcs_present}"): the
#: corpus labels these per session; words of other domains too ("inventory", "mood", "health") are not here
GAME_STATE = set("equipped hp mana stamina affinity affection favorability npc npcs".split())
GAME_STATE |= {"inventory", "hunger", "thirst", "fatigue"}  # not "mood": a track's, a guidance's
#: memory and storage blocks rendered per session ("{core_memory}", "{storage_info}")
MEMORY = {"memory", "memories", "storage", "mem"}
#: how :mod:`.names` says a slot is such a block (:mod:`.given` reads it)
#: … where memory is kept (``memory_dir``), or memories found for this query (``memory_snippets``): content
NOT_MEMORY_BLOCK = set(
    "dir dirs directory path paths folder file files root snippets retrieved relevant".split()
)
NOT_MEMORY_BLOCK |= set("results search matches matched recalled related found".split())
MEMORY_BLOCK = "a memory block rendered per session"
#: a running total of the session ("total_cost", "costSoFar")
RUNNING = {"cost", "costs", "spend", "spent", "usage", "charges"}
RUNNING_OWNERS = {"total", "current", "session", "so", "accumulated", "cumulative", "running"}
#: the current user's own values ("{user_name}", "{USER_EMAIL}", "{user_city}"), per user
USER = {"user", "users", "me", "my"}
USER_PARTS = set("name email mail id city location country region timezone tz phone".split())
USER_PARTS |= {"address", "nickname", "handle", "zip", "postcode", "profile", "details", "facts", "pronouns"}
USER_PARTS |= {"age"}
#: a block about the user, filled per user ("{user_info}", "{{ user_information }}", "{{user_description}}")
USER_PARTS |= {"info", "information", "description", "bio", "background", "alias", "fullname"}
USER_WORDS = {"username", "useremail", "userid", "nickname", "usermail", "useraddress"}
USER_WORDS |= {"userprofile", "useralias"}
#: a chat message's sender as messaging APIs name them (WhatsApp's "pushName", "remoteJid"), whole names
SENDER_WORDS = {"pushname", "remotejid", "sendername", "fromnumber"}
#: a person's own name by its parts ("{{firstName}}", "{full_name}"): filled per user, unless a record's
#: field; a role's name alone ("{customer_name}") may be a persona's, so it is judged by its label
PERSON_NAMES = {"firstname", "lastname", "fullname", "surname", "givenname", "forename", "familyname"}
NAME_PARTS = {
    "first",
    "last",
    "full",
    "given",
    "family",
    "middle",
    "display",
    "preferred",
    "legal",
    "sur",
    "nick",
}
#: a quantity read per request ("tokens_left", "freeMem", "available_memory") …
MEASURED = set("token tokens mem memory ram vram disk storage cpu gpu battery context".split())
#: … when one of these words reads it
MEASURE_READS = {"left", "used", "free", "available", "avail", "usage", "consumed", "spent", "remaining"}
MEASURE_READS |= {"count", "total", "size", "level", "percent", "percentage", "status"}
#: read words that win over a setting word ("token_budget_remaining")
READ_OVER_SETTING = {"left", "used", "remaining", "consumed", "spent"}
#: configuration containers: a key looked up in one (``settings['user_id']``, ``os.environ.get("USER_ID")``)
#: is a setting of the app, not the request's value
CONFIG = {"settings", "setting", "config", "configs", "cfg", "conf", "configuration", "defaults", "default"}
CONFIG |= {"env", "environ", "environment", "options", "opts", "prefs", "constants", "consts"}
#: rendered application state ("global_state", "agentState"), not a postal state
STATE_OWNERS = set(
    "global app application agent game world workflow graph runtime system current session "
    "conversation chat dialog dialogue task user".split()
)
#: a snapshot of the working copy ("git_status", "currentBranch")
GIT = {"git", "repo", "vcs"}
GIT_PARTS = {"status", "branch", "diff", "log", "changes", "commits"}
#: … of the working copy now ("recent_commits", "current_branch")
GIT_NOW = {"current", "recent", "latest"}
#: … but the repository's own setting, whatever is checked out ("gitMainBranch", "default_branch")
GIT_FIXED = {"main", "default", "base", "master", "trunk", "upstream"}
#: what the user did lately, rendered per session ("recent_chats", "recentConversations")
#: (not "messages": recent_messages is the chat history, content like {chat_history})
RECENT_OF = {"chats", "conversations", "activity", "interactions", "sessions", "searches"}
#: a stored moment's date ("receivedDate", "due_date", "birth_date"), not today's
MOMENT_OF = {"received", "sent", "created", "updated", "published", "publish", "due", "birth", "release"}
MOMENT_OF |= {"start", "end", "expiry", "expiration", "delivery", "order", "invoice", "event", "meeting"}
MOMENT_OF |= {"deadline", "reminder", "scheduled"}
#: … unless today's ("today_start", "tomorrow_end")
TODAY = {"today", "tomorrow", "yesterday", "now", "tonight"}
#: a record's time parts with no word for now ("reservation.time", "msg.timestamp_iso")
TIME_PARTS = {"time", "timestamp", "datetime", "hour", "minute", "ts", "iso", "str"}
#: where the user is now ("currentTimezone", "current_city"): per user, not a setting
WHERE = {"timezone", "tz", "zone", "locale", "location", "city", "country", "region"}
#: … or whose whereabouts ("requestHints.city", "visitor_country", "geo.region"): the request's origin
WHERE_OWNERS = {"request", "req", "client", "visitor", "caller", "sender", "geo", "ip", "device", "browser"}
ID_OWNERS = set(
    "request req session sess trace span correlation conversation thread chat run job message msg call "
    "transaction txn turn interaction event execution invocation task query response completion visit order "
    "ticket device user scratchpad tab window page client sender person group".split()
)
#: where a chat app's conversation is held ("{{guildName}}", "message.channel.name", "{room_title}"):
#: per session, as LABELS.md labels "The server you are in is called: [Server Name]"
CHAT_PLACES = {"guild", "channel", "room", "chatroom", "group", "chat"}
CHAT_PLACE_PARTS = {"name", "title", "topic", "purpose"}
ID_OWNERS |= {"guild", "channel", "room", "chatroom"}
LAST_OF = set("login seen active activity visit message interaction order purchase sync".split())
LAST_OF |= {"exit", "command", "cmd", "error", "run", "result"}  # a shell's or a run's last outcome
EVENT_AT = {
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
COUNTS = {"count", "number", "num", "index", "idx", "no"}
COUNTED = set(
    "dialogue message msg step round request conversation chat interaction reply call visit".split()
)
COUNTED |= {"member", "participant"}
SETTING = {
    "capacity",
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
    "default",  # default_reminder_time: a setting's value
    "offset",  # utc_offset: the zone's
}

NOW_CALLS = {
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
NOW_DOTTED = {
    "time.time",
    "time.strftime",
    "Date",
    "moment",
    "dayjs",
    "DateTime.local",
    "DateTime.utc",
    "new Date",
}
NOW_DOTTED |= {"time.Now", "System.currentTimeMillis", "DateTime.Now", "DateTime.UtcNow", "DateTime.Today"}
NOW_DOTTED |= {"DateTimeOffset.Now", "DateTimeOffset.UtcNow"}  # Go's, Java's, C#'s clocks (C#'s: properties)
RANDOM_CALLS = {
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
RANDOM_CALLS |= {"NewGuid", "new_v4", "new_v7"}  # C#'s Guid.NewGuid(), Rust's Uuid::new_v4()

#: names written as one lower-case word ("{chatname}", "{membercount}", "sessionid"), split as if camelCased
_JOINED_HEADS = (
    "user chat member channel guild group room server session conversation thread current curr today".split()
)
_JOINED_TAILS = "name names id ids count title topic info date time timestamp fullname".split()
JOINED = {h + t: (h, t) for h in _JOINED_HEADS for t in _JOINED_TAILS}
