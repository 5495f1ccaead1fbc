"""Ids that are a whole token (or most of one): UUIDs, JWTs, prefixed, typed, labelled, ULID, hex and
base64 ids, read by :func:`token_ids` at a token :func:`.shapes.scan` found; :func:`id_epoch` tells an
epoch that is a node's id (a workflow export's) from a clock reading.

It does NOT find tokens (:mod:`.shapes` does) nor judge them (:mod:`.judge`).
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate
from analyzer.detection.randomness import looks_random_b64, looks_random_hex, ulid_ms

__all__ = ["EPOCH_MS", "JWT", "UUID", "id_epoch", "record_value", "token_ids"]

#: 2017–2036 in milliseconds: a clock reading even unlabelled
EPOCH_MS = range(1_500_000_000_000, 2_100_000_000_000)
UUID = re.compile(
    r"(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])"
)
ID_LABEL_BEFORE = re.compile(
    r"(?i)\b(?:x-)?(?:request|req|session|sess|trace|span|correlation|conversation|run|message|msg|call|transaction|txn)[-_ ]?id\b(?:\W{0,3}[:=]\s*[\"'`]?|(\s+(?:is\s+)?))\Z"
)
#: "session=V1StGXR8_Z5jdHi6B-myT", "Trace: 4bf9…": a random-looking value right after a bare id owner
ID_BARE_LABEL = re.compile(
    r"(?i)\b(?:x-)?(?:request|session|sess|trace|correlation|conversation|thread|run)\s*[:=]\s*[\"'`]?\Z"
)
#: a ULID: 48 bits of milliseconds then 80 random bits, in Crockford base32
ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
ID_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.:]{5,}")
PREFIXED_ID = re.compile(
    r"\b(?:req|msg|sess|resp|run|call|toolu|chatcmpl|cmpl|trace|evt|span)[_-][A-Za-z0-9]{10,}\b"
)
#: cus_N8s7Hq2LkP0xRt, sub_1QjZ…
TYPED_ID = re.compile(r"\b[a-z]{2,10}[_-](?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{12,40}\b")
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
HEX = re.compile(r"(?<![\w-])[0-9a-fA-F]{16,}(?![\w-])")
B64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{22,}(?![\w+/-])")


def token_ids(text: str, ts: int, te: int, out: list[Candidate]) -> None:
    """Ids that are a whole token (or most of one): UUIDs, JWTs, prefixed, labelled, hex and base64 ids."""
    n = te - ts
    if n >= 36 and "-" in text[ts:te]:
        for m in UUID.finditer(text, ts, te):
            out.append(Candidate("uuid", *m.span(), HIGH))
    if n >= 6 and "id" in text[max(0, ts - 48) : ts].lower():
        label = ID_LABEL_BEFORE.search(text, max(0, ts - 48), ts)
        if label:
            m = ID_VALUE.match(text, ts)
            value = m.group(0).rstrip(".:") if m else ""
            # "request id abc123" (no colon): letters and digits needed
            unlabelled = label.group(1) is not None
            if (
                len(value) >= 6
                and any(ch.isdigit() for ch in value)
                and not (unlabelled and not any(ch.isalpha() for ch in value))
            ):
                out.append(
                    Candidate("request-id", ts, ts + len(value), HIGH, "labelled-id", label.group(0).strip())
                )
    if (
        n >= 16
        and text[ts - 1 : ts] in (":", "=", " ", '"', "'")
        and not any(c.kind == "request-id" and c.start == ts for c in out[-2:])
    ):
        label = ID_BARE_LABEL.search(text, max(0, ts - 24), ts)
        m = ID_VALUE.match(text, ts) if label else None
        value = m.group(0).rstrip(".:") if m else ""
        if len(value) >= 16 and (
            looks_random_b64(value) or (HEX.fullmatch(value) and looks_random_hex(value))
        ):
            out.append(
                Candidate("request-id", ts, ts + len(value), HIGH, "labelled-id", label.group(0).strip())
            )
    if n == 26 and ULID.fullmatch(text, ts, te) and ulid_ms(text[ts:te]) in EPOCH_MS:
        out.append(Candidate("request-id", ts, te, HIGH, "ulid"))
    if n >= 14:
        for m in PREFIXED_ID.finditer(text, ts, te):
            out.append(Candidate("request-id", *m.span(), HIGH, "prefixed"))
        for m in TYPED_ID.finditer(text, ts, te):
            out.append(Candidate("request-id", *m.span(), HIGH, "typed"))
        if "eyJ" in text[ts:te]:
            for m in JWT.finditer(text, ts, te):
                out.append(Candidate("jwt", *m.span(), HIGH))
    if n >= 16:
        for m in HEX.finditer(text, ts, te):
            out.append(Candidate("hex-id", *m.span(), HIGH))
    if n >= 22:
        for m in B64.finditer(text, ts, te):
            end = m.end()
            while end < len(text) and end - m.end() < 2 and text[end] == "=":
                end += 1
            out.append(Candidate("base64-id", m.start(), end, HIGH))


#: an id's key before an epoch ("id: '1740638793787'", "source:", "parent_id":), a Dify node's reference
_ID_KEY = re.compile(
    r"(?i)(?:\b(?:id|ids|source|target|parent|node|edge|ref|key)|_id|Id)[\"']?\s*[:=]\s*[\"']?$|\{\{#$"
)


def id_epoch(text: str, start: int, end: int) -> bool:
    """Epoch milliseconds that name a thing made once (a workflow's node ids: "1740638793787-source-…",
    ``id: '1740638793787'``, ``{{#1740645185279.text#}}``), not the clock of a request."""
    value, k, seen = text[start:end], text.find(text[start:end]), 0
    while (
        k >= 0 and seen < 32
    ):  # any copy named as an id makes every copy one (a Dify selector's "- '1740…'")
        joined = text[k + len(value) : k + len(value) + 1] == "-" or text[k - 1 : k] == "-"
        if joined or _ID_KEY.search(text, max(0, k - 16), k):
            return True
        k, seen = text.find(value, k + len(value)), seen + 1
    return False


#: a record's own key before an id ("id": "…", ``versionId: …``): a node, workflow or install of a document
#: (an n8n or Dify export), fixed where the document is; per-request ids have owners (session, request …);
#: a hex pinned after a version ("langgenius/openai:0.0.12@604c…") is a package's digest
_RECORD_ID_KEY = re.compile(
    r"""(?im)(?:^[ \t]*(?:-[ \t]+)?|["'])(?:id|uuid|(?:node|version|webhook|workflow|instance|credential|template|case)_?id"""
    r"""|(?:source|target)_?handle)["']?[ \t]*[:=][ \t]*["']?$|\d\.\d+(?:\.\d+)?@$"""
)
#: … and its own moments ("createdAt": "2024-12-23T16:09:38.737Z", ``updated_at:``): when it was saved
_RECORD_MOMENT_KEY = re.compile(
    r"""(?im)(?:^[ \t]*(?:-[ \t]+)?|["'])(?:created|updated|modified|saved|last_?modified)_?(?:at|on|time|date)?["']?"""
    r"""[ \t]*:[ \t]*["']?$"""
)
_ID_KINDS = frozenset(("uuid", "hex-id", "base64-id", "request-id"))


def record_value(text: str, start: int, kind: str) -> bool:
    """The id or moment at ``start`` is the value of a record's own key (``"id": "03b4…"``,
    ``"instanceId": …``, ``"createdAt": …``)."""
    key = _RECORD_ID_KEY if kind in _ID_KINDS else _RECORD_MOMENT_KEY if kind in ("time", "date") else None
    if key is None:
        return False
    if kind != "uuid":
        return key.search(text, max(0, start - 48), start) is not None
    end = start + 36  # a UUID: any copy of it under a record's key makes every copy one ("- 8c46…" in a list)
    return any(key.search(text, max(0, k - 48), k) for k in _copies(text, text[start:end]))


def _copies(text: str, value: str, most: int = 32) -> list[int]:
    out, k = [], text.find(value)
    while k >= 0 and len(out) < most:
        out.append(k)
        k = text.find(value, k + len(value))
    return out
