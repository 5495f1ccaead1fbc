"""Which volatile values in a prompt's head may move, found once per stable head.

:func:`movable` keeps the detections of :func:`analyzer.detect.find_volatile` that are certainly
per-request values (timestamps, epochs, "now"-labelled times and dates in any language, repeats,
ids under a label, session state and environment or git-status blocks), each with its label.
Results are kept in a bounded, thread-safe :class:`DecisionCache` keyed by the text's shape,
reused only when a fresh scan would give the same answer.

It does NOT change any text, and never moves examples, schedules, historical dates, unlabelled ids,
ids labelled as configuration, or hex and base64 ids under a label that names nothing per request.
See docs/rewrite.md ("aggressive") for what moves and the cache.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

import xxhash

from analyzer.detect import find_volatile
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
_SHAPE = str.maketrans("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "a" * 62)
MAX_LABEL = 80


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    #: the value is text[start:end]
    end: int
    #: the label is text[label_start:start].strip()
    label_start: int


#: sentence or clause
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.;!?,]\s")


def _label_start(text: str, start: int, floor: int) -> int:
    """Where the label of a value at ``start`` begins: its line, its sentence or clause,
    after the previous value, at most ``MAX_LABEL`` characters back."""
    at = max(text.rfind("\n", 0, start) + 1, floor, start - MAX_LABEL)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, at, start)]
    return ends[-1] if ends else at


def _moves(
    kind: str, value: str, label: str, after_today_phrase: bool, reason: str = "", after: str = ""
) -> bool:
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
        return after_today_phrase or (bool(_NOW_LABEL.search(label)) and not _NOT_NOW.search(label))
    return False  # today-phrases are wording; placeholders are the same text every time


def _minted(kind: str, value: str) -> bool:
    """The value's own shape says it was minted for one event: a random or time-based UUID, a JWT.
    A hex or base64 run under an unknown label may as well be a key, a hash or a serial number."""
    return kind == "jwt" or (kind == "uuid" and uuid_kind(value) in ("random", "time"))


def scan(text: str) -> tuple[Span, ...]:
    """The movable values of ``text`` (no cache)."""
    found = sorted(find_volatile(text), key=lambda v: (v.start, -v.end))
    spans: list[Span] = []
    floor = 0
    phrase_end = -1
    for v in found:
        if v.kind == "today-phrase":
            phrase_end = v.end
            continue
        if spans and v.start < spans[-1].end:
            continue
        label_start = _label_start(text, v.start, floor)
        label = text[label_start : v.start]
        after_phrase = (
            phrase_end >= 0 and 0 <= v.start - phrase_end <= 3 and "\n" not in text[phrase_end : v.start]
        )
        after = text[v.end : v.end + 40].split("\n", 1)[0]
        if _moves(v.kind, v.value, label, after_phrase, v.reason, after):
            spans.append(Span(v.start, v.end, label_start))
            floor = v.end
    return tuple(spans)


def _outside(text: str, spans: tuple[Span, ...]) -> list[str]:
    out, at = [], 0
    for s in spans:
        out.append(text[at : s.start])
        at = s.end
    out.append(text[at:])
    return out


def _same_lines(text: str, spans: tuple[Span, ...]) -> bool:
    """A fresh scan of each line holding a cached value finds exactly the cached values."""
    lines: dict[int, list[Span]] = {}
    for s in spans:
        lines.setdefault(text.rfind("\n", 0, s.start) + 1, []).append(s)
    for start, cached in lines.items():
        end = text.find("\n", cached[-1].end)
        found = scan(text[start : len(text) if end < 0 else end])
        if [(f.start + start, f.end + start, f.label_start + start) for f in found] != [
            (c.start, c.end, c.label_start) for c in cached
        ]:
            return False
    return True


class DecisionCache:
    """Spans per stable head, bounded by entries and bytes; exact (see the module docstring)."""

    #: texts of one shape kept side by side
    PER_KEY = 4

    def __init__(
        self, max_entries: int = 2048, max_bytes: int = 32 * 1024 * 1024, max_text: int = 1024 * 1024
    ) -> None:
        self.max_entries, self.max_bytes, self.max_text = max_entries, max_bytes, max_text
        self._entries: OrderedDict[bytes, list[tuple[str, tuple[Span, ...]]]] = OrderedDict()
        self._bytes = 0
        self._count = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def movable(self, text: str) -> tuple[Span, ...]:
        if not text:
            return ()
        if len(text) > self.max_text:
            self.misses += 1
            return scan(text)
        key = xxhash.xxh3_128_digest(text.translate(_SHAPE).encode("utf-8", "surrogatepass"))
        with self._lock:
            candidates = list(self._entries.get(key, ()))
        for old, spans in candidates:
            if (
                len(old) == len(text)
                and _outside(old, spans) == _outside(text, spans)
                and _same_lines(text, spans)
            ):
                with self._lock:
                    self.hits += 1
                    if key in self._entries:
                        self._entries.move_to_end(key)
                return spans
        spans = scan(text)
        with self._lock:
            self.misses += 1
            kept = self._entries.setdefault(key, [])
            kept.insert(0, (text, spans))
            self._bytes += len(text)
            self._count += 1
            if len(kept) > self.PER_KEY:
                self._bytes -= len(kept.pop()[0])
                self._count -= 1
            self._entries.move_to_end(key)
            while self._entries and (self._count > self.max_entries or self._bytes > self.max_bytes):
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= sum(len(t) for t, _ in dropped)
                self._count -= len(dropped)
        return spans

    def __len__(self) -> int:
        return self._count


_DEFAULT = DecisionCache()


def movable(text: str) -> tuple[Span, ...]:
    """The movable values of ``text``, through the process-wide decision cache."""
    return _DEFAULT.movable(text)


def clear_cache() -> None:
    """Forget every cached decision (tests: a fresh process)."""
    global _DEFAULT
    _DEFAULT = DecisionCache()
