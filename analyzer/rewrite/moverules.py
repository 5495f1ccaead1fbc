"""Which of the detector's findings the aggressive rewrite moves: the rule per kind and label.

:func:`moves` keeps what is certainly per request (timestamps, epochs after a time or event word,
dates and times under a "now" label or after a today-phrase, a whole date alone on its line, session
state, ids under a label naming a per-request thing or minted for one event) and leaves examples,
configuration ids and unlabelled clock readings.

It does NOT find values (:mod:`analyzer.detect`) nor cache anything (:mod:`.movable`).
"""

from __future__ import annotations

import re

from analyzer.detection.randomness import uuid_kind

_ALWAYS = {"uuid", "request-id", "jwt", "hex-id", "base64-id"}
_NOW_LABEL = re.compile(
    r"(?i)\b(?:now|current(?:ly)?|today(?:'s)?|time(?:stamp)?|date(?:time)?|clock|as of|ts|at)\b\W*$"
)
_NOT_NOW = re.compile(
    r"(?i)\b(?:cut-?off|updated|since|founded|released?|version|effective|until|expires?|deadline|born|opens?|closes?|hours|between|from|e\.g\.|example|such as|like|for instance|format|range)\b"
)
_EXAMPLE = re.compile(
    r"(?i)(?:\be\.g\.|\bi\.e\.|example|such as|\blike\b|for instance|format|sample|placeholder|looks? like)\W*$"
)
#: a whole date: its year written out ("Thursday, April 24, 2025", "2025-04-24", "24.04.2025")
_WRITTEN_DATE = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d|\d{1,2}:\d{2}.*\d{4}|\d{4}.*\d{1,2}:\d{2}")
_EPOCH = re.compile(r"^\d{10}(?:\d{3})?$")
_WORD = re.compile(r"[^\W\d_]{2,}")
# Labels that name a per-request or per-session value (a fixed account, merchant or knowledge
# base id in a system prompt is configuration: it stays).
_ID_LABEL = re.compile(
    r"(?i)(?:\b|_)(?:request|req|session|sess|trace|span|run|correlation|conversation|convo|chat|call|"
    r"message|msg|turn|interaction|transaction|nonce|idempotency|invocation|execution|job|task|visit|"
    r"user[ _-]?session|jwt|token|bearer|thread|upload|batch|pairing|order|ticket|booking|reservation|"
    r"checkout|login|operation|event|submission|attempt|cart|payment|invoice)(?:\b|_)|\buuid\b"
)
#: labels that name the current user or visitor: per user, so they move unless configuration names them too
_USER_LABEL = re.compile(r"(?i)(?:\b|_)(?:user|visitor|customer|member|caller|sender|player|patient)(?:\b|_)")
# Labels that name configuration or a fixture: the same id on every request of the app (it stays).
_CONFIG_LABEL = re.compile(
    r"(?i)(?:\b|_)(?:test|dummy|fake|mock|default|fixed|static|constant|account|acct|merchant|tenant|"
    r"org(?:anization)?|workspace|project|team|company|knowledge[ _-]?base|kb|dataset|index|collection|"
    r"corpus|store|shop|app(?:lication)?|client|bot|"
    r"assistant|agent|model|deployment|cluster|environment|env|api[ _-]?key|key|secret|partner|vendor|"
    r"brand|site|domain|namespace|bucket|database|db|table|calendar|channel|folder|drive|template|form|"
    r"survey|product|plan|sku|repo(?:sitory)?|commit|version|build|release|license|licence|voice|workflow|"
    r"pipeline|tracking|property|prompt|tool|guild|server|region|webhook|integration)(?:\b|_)"
)
#: words that make an epoch number a moment: now-words (``_NOW_LABEL``) or an event's
_EVENT_LABEL = re.compile(
    r"(?i)\b(?:started|starts?|began|begun|sent|received|created|generated|issued|queued|submitted|logged|"
    r"expir(?:es|y|ed)|exp|iat|nbf|updated|modified|last[ _-]?(?:seen|login|active|activity)|epoch|unix|millis|"
    r"ms)\b"
)
#: or the words right after it: "1773481287 seconds since the epoch"
_EPOCH_AFTER = re.compile(
    r"(?i)^\s*(?:ms|milliseconds?|s|secs?|seconds?)?\s*(?:since|after) (?:the )?(?:unix )?epoch"
)
_PER_REQUEST_PREFIXES = (
    "req_",
    "req-",
    "request_",
    "sess_",
    "session_",
    "msg_",
    "chatcmpl-",
    "resp_",
    "run_",
    "call_",
    "trace_",
    "span_",
    "conv_",
    "thread_",
    "toolu_",
    "eyj",
)
#: detector reasons that make a date or time certain: a label, a phrase, its other half, a repeat
_SURE = ("labelled", "follows", "the date of", "the time of", "the same value", "the bound of a period")
_SURE += (
    "the weekday of",
    "the date before it",
    "a clock time said to be the user",
    "the current year or month",
)


def moves(
    kind: str, value: str, label: str, after_today_phrase: bool, reason: str = "", after: str = ""
) -> bool:
    """Whether a detection of ``kind`` with this ``label`` (the words before it), detector
    ``reason`` and ``after`` (the rest of its line) is certainly per request: it moves."""
    if kind == "state":  # a count, state JSON, an environment or git-status block: read per request
        return not _EXAMPLE.search(label)
    if kind in ("time", "date") and reason.startswith(_SURE):
        return True  # the detector read a "now" label in any language, a phrase, or the same value again
    if kind in _ALWAYS:  # an id the detector kept moves with its label, unless that names configuration
        if _EXAMPLE.search(label):
            return False
        if _ID_LABEL.search(label) or value.lower().startswith(_PER_REQUEST_PREFIXES):
            return True
        if _CONFIG_LABEL.search(label):
            return False
        # a label no list names ("Keyboard:", "Pairing code:") moves only a value minted per event
        return bool(_USER_LABEL.search(label)) or (bool(_WORD.search(label)) and _minted(kind, value))
    if kind == "time":
        if _EPOCH.match(value):  # a bare 10/13-digit number is a moment only when labelled as one
            moment = _NOW_LABEL.search(label) or _EVENT_LABEL.search(label) or _EPOCH_AFTER.match(after)
            return bool(moment) and not _EXAMPLE.search(label)
        if _TIMESTAMP.search(value):
            return not _EXAMPLE.search(label)
        return after_today_phrase or (bool(_NOW_LABEL.search(label)) and not _NOT_NOW.search(label))
    if kind == "date":
        if (
            reason == "a date alone on its line"
            and _WRITTEN_DATE.search(value)
            and not _EXAMPLE.search(label)
        ):
            return True  # "Thursday, April 24, 2025" on a line of its own: a whole date an app wrote in
        return after_today_phrase or (bool(_NOW_LABEL.search(label)) and not _NOT_NOW.search(label))
    return False  # today-phrases are wording; placeholders are the same text every time


def _minted(kind: str, value: str) -> bool:
    """The value's own shape says it was minted for one event: a random or time-based UUID, a JWT.
    A hex or base64 run under an unknown label may as well be a key, a hash or a serial number."""
    return kind == "jwt" or (kind == "uuid" and uuid_kind(value) in ("random", "time"))
