"""The volatile-value detector as it was before the one-pass scan: one regex pass per pattern.

Kept only for ``prefixgate bench lint``, which times it side by side with
:func:`analyzer.detect.find_volatile` in one run. Nothing else imports it; it is frozen
(bugs here are the old detector's, on purpose).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

HIGH, MEDIUM, LOW = "high", "medium", "low"
KIND_LABELS = {
    "time": "time of day",
    "date": "date",
    "today-phrase": "today/current-date phrase",
    "placeholder": "template placeholder",
    "uuid": "UUID",
    "request-id": "request/session id",
    "jwt": "JWT",
    "hex-id": "random hex id",
    "base64-id": "random base64 id",
}


@dataclass(frozen=True, slots=True)
class Volatile:
    kind: str
    start: int
    end: int
    value: str
    severity: str


_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:day|sday|nesday|rsday|urday)?"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_VOLATILE_NAME = r"[\w.]*(?:now|time|date|today|timestamp|datetime|uuid|nonce|random|request_?id|session_?id|trace_?id|run_?id)[\w.]*"

_ISO_TS = re.compile(
    r"(?<![\d-])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?(?:Z|[+-](?:[01]\d):?[0-5]\d| ?UTC)?(?![\d])"
)
_CLOCK = re.compile(
    r"(?<![\d:.])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:\s?(?:[AaPp]\.[Mm]\.|[AaPp][Mm]\b))?(?:\s?(?:UTC|GMT|Z\b|[A-Z][SD]T\b))?(?![\d:])"
)
_RANGE_AFTER = re.compile(r"\s*(?:-|–|—|to|until)\s*\d{1,2}:\d{2}")
_RANGE_BEFORE = re.compile(r"\d{1,2}:\d{2}\s*(?:-|–|—|to|until)\s*$")
_EPOCH = re.compile(r"(?<![\w.])1[0-9]{9}(?:[0-9]{3}|\.[0-9]{1,6})?(?![\w.])")
#: 2017–2036 in milliseconds: a clock reading even unlabelled
_EPOCH_MS = range(1_500_000_000_000, 2_100_000_000_000)
_EPOCH_CONTEXT = re.compile(
    r"(?i)(?:time|timestamp|\bts|epoch|created|updated|\bat\b|\bnow|\bdate|expires?|\bexp\b|\biat\b|_at)\W{0,6}$"
)
_ISO_DATE = re.compile(r"(?<![\d.\-/])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\d\-.]\d)")
_TEXT_DATE = re.compile(
    rf"\b(?:{_WEEKDAY},?\s+)?(?:{_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?,?\s+\d{{4}}|{_DAY}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+\d{{4}}|{_WEEKDAY},?\s+{_MONTH}\.?\s+{_DAY}(?:st|nd|rd|th)?)\b"
)
_NUM_DATE = re.compile(r"(?<![\d/.\-])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{2}/\d{2})(?![\d/])")
_TODAY = re.compile(
    r"(?i)\b(?:today(?:'s date)? is|today's date|the (?:current )?(?:date|time|date and time|datetime) is|current (?:date|time|date and time|datetime|timestamp)(?: is)?\s*[:=]?|(?:it is|it's) now|as of today,?)"
)
_TODAY_VALUE = re.compile(rf"(?i)\s*[:=,]?\s*(?:\d|{_WEEKDAY}|{_MONTH}|\{{|\$\{{|%\(|<)")
_PLACEHOLDER = re.compile(
    rf"(?i)\{{\{{\s*{_VOLATILE_NAME}(?:\s*\|[^}}]*)?\s*\}}\}}|\$\{{\s*{_VOLATILE_NAME}\s*\}}|%\(\s*{_VOLATILE_NAME}\s*\)[sdr]|(?<![{{$])\{{\s*{_VOLATILE_NAME}(?::[^{{}}]*)?\s*\}}(?!\}})|<%=?\s*{_VOLATILE_NAME}\s*%>"
)
_UUID = re.compile(
    r"(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])"
)
_LABELLED_ID = re.compile(
    r"(?i)\b(?:x-)?(?:request|req|session|sess|trace|span|correlation|conversation|run|message|msg|call|transaction|txn)[-_ ]?id\b(?:\W{0,3}[:=]\s*[\"']?|(\s+(?:is\s+)?))([A-Za-z0-9][A-Za-z0-9_\-.:]{5,})"
)
_PREFIXED_ID = re.compile(
    r"\b(?:req|msg|sess|resp|run|call|toolu|chatcmpl|cmpl|trace|evt|span)[_-][A-Za-z0-9]{10,}\b"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
_HEX = re.compile(r"(?<![\w-])[0-9a-fA-F]{16,}(?![\w-])")
_B64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{22,}={0,2}(?![\w+/=-])")
_DIGEST_CONTEXT = re.compile(
    r"(?i)(?:commit|sha\d*|revision|rev|hash|checksum|digest|md5|etag|fingerprint)(?:\s+(?:is|was|id))?\W{0,6}$"
)
#: "anthropic-version: 2023-06-01", "API version 2024-02-15"
_VERSION_CONTEXT = re.compile(r"(?i)version\W{0,4}$")
#: only a bullet/heading before the date …
_CHANGELOG_LINE = re.compile(r"^[ \t]*(?:[-*+]|#{1,6}|\d+\.)?[ \t]*\[?$")
#: … and a colon or dash after it: "- 2024-03-15: v2.4 adds …"
_CHANGELOG_AFTER = re.compile(r"\]?[ \t]*(?::|-|–|—|\()")
#: "## [1.2.0] - 2024-03-15"
_RELEASE_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]*\[?v?\d+\.\d+[^\n]*$")
_CODE = re.compile(r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]+`")

_URL = re.compile(r"\b(?:https?|ftp|s3|gs)://[^\s<>\"'`)\]]+")
#: ids inside links: commit, asset and CDN paths are static
_URL_EXEMPT = {"uuid", "hex-id", "base64-id"}

_PRIORITY = {
    "jwt": 0,
    "time": 1,
    "uuid": 2,
    "request-id": 3,
    "placeholder": 4,
    "today-phrase": 5,
    "date": 6,
    "hex-id": 7,
    "base64-id": 8,
}


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


#: a longer run is a blob (an encoded file, a key block), not a per-request id
MAX_ID_CHARS = 512


def _looks_random_hex(s: str) -> bool:
    if len(s) > MAX_ID_CHARS:
        return False
    digits = sum(ch.isdigit() for ch in s)
    letters = len(s) - digits
    return digits >= 2 and letters >= 2 and entropy(s.lower()) >= 3.0 and not re.search(r"(.)\1{4}", s)


def _looks_random_b64(s: str) -> bool:
    core = s.rstrip("=")
    if len(core) > MAX_ID_CHARS:
        return False
    upper = sum(ch.isupper() for ch in core)
    lower = sum(ch.islower() for ch in core)
    digits = sum(ch.isdigit() for ch in core)
    if (
        upper < 2
        or lower < 2
        or digits < (1 if len(core) >= 32 else 2)
        or re.search(r"[a-z]{7}|[A-Z][a-z]{5,}[A-Z][a-z]{3}", core)
    ):
        return False
    if "/" in core and re.fullmatch(r"/?[\w.-]+(?:/[\w.-]+)+/?", core) and core.strip("/").count("/") >= 2:
        return False
    return entropy(core) >= 3.8


def _static_date(text: str, start: int, end: int) -> bool:
    """A date that names a fixed thing: an API version, a changelog entry or a release heading."""
    if _VERSION_CONTEXT.search(text, max(0, start - 24), start):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if _CHANGELOG_LINE.match(text[line_start:start]) and _CHANGELOG_AFTER.match(text, end):
        return True
    return bool(_RELEASE_HEADING.match(text[line_start:line_end]))


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE.finditer(text)] if "`" in text or "~~~" in text else []


def _candidates(text: str) -> list[Volatile]:
    out: list[Volatile] = []

    def add(kind: str, start: int, end: int, severity: str) -> None:
        out.append(Volatile(kind, start, end, text[start:end], severity))

    for m in _ISO_TS.finditer(text):
        add("time", *m.span(), HIGH)
    for m in _CLOCK.finditer(text):
        if _RANGE_AFTER.match(text, m.end()) or _RANGE_BEFORE.search(text, max(0, m.start() - 12), m.start()):
            continue
        add("time", *m.span(), HIGH)
    for m in _EPOCH.finditer(text):
        if _EPOCH_CONTEXT.search(text, max(0, m.start() - 24), m.start()) or (
            m.group(0).isdigit() and int(m.group(0)) in _EPOCH_MS
        ):
            add("time", *m.span(), HIGH)
    for rx in (_ISO_DATE, _TEXT_DATE, _NUM_DATE):
        for m in rx.finditer(text):
            if not _static_date(text, *m.span()):
                add("date", *m.span(), LOW)
    for m in _TODAY.finditer(text):
        if _TODAY_VALUE.match(text, m.end()):
            add("today-phrase", *m.span(), MEDIUM)
    for m in _PLACEHOLDER.finditer(text):
        name = m.group(0).lower()
        add(
            "placeholder",
            *m.span(),
            MEDIUM if ("date" in name or "today" in name) and "time" not in name else HIGH,
        )
    for m in _UUID.finditer(text):
        if set(m.group(0)) - {"0", "-"}:
            add("uuid", *m.span(), HIGH)
    for m in _LABELLED_ID.finditer(text):
        value = m.group(2).rstrip(".:")
        unlabelled = m.group(1) is not None
        if (
            any(ch.isdigit() for ch in value)
            and not (unlabelled and not any(ch.isalpha() for ch in value))
            and len(value) >= 6
        ):
            add("request-id", m.start(2), m.start(2) + len(value), HIGH)
    for m in _PREFIXED_ID.finditer(text):
        if any(ch.isdigit() for ch in m.group(0)):
            add("request-id", *m.span(), HIGH)
    for m in _JWT.finditer(text):
        add("jwt", *m.span(), HIGH)
    for m in _HEX.finditer(text):
        if _looks_random_hex(m.group(0)) and not _DIGEST_CONTEXT.search(
            text, max(0, m.start() - 24), m.start()
        ):
            add("hex-id", *m.span(), HIGH)
    for m in _B64.finditer(text):
        if _looks_random_b64(m.group(0)) and not _DIGEST_CONTEXT.search(
            text, max(0, m.start() - 24), m.start()
        ):
            add("base64-id", *m.span(), HIGH)
    return out


def find_volatile(text: str) -> list[Volatile]:
    """Volatile values in ``text``, in order, without overlaps (the strongest kind wins)."""
    if not text:
        return []
    code = _code_spans(text)
    urls = [m.span() for m in _URL.finditer(text)] if "://" in text else []
    found = sorted(_candidates(text), key=lambda v: (v.start, -(v.end - v.start), _PRIORITY[v.kind]))
    out: list[Volatile] = []
    taken_until = -1
    for v in found:
        if v.start < taken_until:
            continue
        if any(a <= v.start < b for a, b in code):
            continue
        if v.kind in _URL_EXEMPT and any(a <= v.start < b for a, b in urls):
            continue
        out.append(v)
        taken_until = v.end
    return out
