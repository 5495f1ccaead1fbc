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


#: the ASCII characters ``\W`` matches
_ASCII_NONWORD = "".join(chr(i) for i in range(128) if not (chr(i).isalnum() or chr(i) == "_"))


def _may_end_label(low: str) -> bool:
    """Whether the lowered window ``low`` can end as an :data:`ID_LABEL_BEFORE` match does: "id", then
    only non-word characters ("id: ", "id=\"") or "id is "; a window that is not ASCII may (case folding)."""
    return not low.isascii() or low.rstrip(_ASCII_NONWORD).endswith(("id", "is"))


def token_ids(text: str, ts: int, te: int, out: list[Candidate]) -> None:
    """Ids that are a whole token (or most of one): UUIDs, JWTs, prefixed, labelled, hex and base64 ids."""
    n = te - ts
    if n >= 36 and "-" in text[ts:te]:
        for m in UUID.finditer(text, ts, te):
            out.append(Candidate("uuid", *m.span(), HIGH))
    if n >= 6 and "id" in (before := text[max(0, ts - 48) : ts].lower()) and _may_end_label(before):
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


#: an id's key before an epoch ("id: '1740638793787'", "source:", "parent_id":, "nodeId:"), a Dify node's
#: reference ("{{#1740645185279.text#}}")
_ID_KEY = re.compile(
    r"(?i)(?:\b(?:id|ids|source|target|parent|node|edge|ref|key)|_id|(?-i:Id))[\"']?\s*[:=]\s*[\"']?\Z|\{\{#\Z"
)
#: runs of digits (a leading class: sre skips to one in C); a run of exactly 13 is an epoch-ms shape
_DIGITS = re.compile(r"\d{13,}")
#: a UUID's shape, its boundaries checked after (no lookbehind first: sre skips to a hex digit in C)
_UUID_SHAPE = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
#: how many copies of one value are read; how many values of a call are looked for one by one
_MOST, _FEW = 32, 16


def _copies(text: str, memo: dict, what: str, value: str) -> list[int]:
    """Where ``value`` (a 13-digit run, ``what="epoch"``, or a UUID) is in ``text``: by ``str.find`` for
    the first few values of a call, then from one pass over the text that maps them all (many distinct
    values must not make a call quadratic)."""
    every = memo.get(("copies", what))
    if every is None:
        asked = memo[("asked", what)] = memo.get(("asked", what), 0) + 1
        if asked <= _FEW:
            out, k, n = [], text.find(value), len(value)
            while k >= 0 and len(out) < _MOST:
                if not (text[k - 1 : k].isalnum() or text[k + n : k + n + 1].isalnum()):
                    out.append(k)  # a whole value, not part of a longer run
                k = text.find(value, k + n)
            return out
        every = memo[("copies", what)] = _all_copies(text, what)
    return every.get(value, [])[:_MOST]


def _all_copies(text: str, what: str) -> dict[str, list[int]]:
    got: dict[str, list[int]] = {}
    if what == "epoch":
        for m in _DIGITS.finditer(text):
            if m.end() - m.start() == 13:
                got.setdefault(m.group(), []).append(m.start())
        return got
    for m in _UUID_SHAPE.finditer(text):
        a, b = m.span()
        if not (text[a - 1 : a].isalnum() or text[a - 1 : a] == "-" or text[b : b + 1].isalnum()):
            got.setdefault(m.group(), []).append(a)
    return got


def id_epoch(text: str, start: int, end: int, memo: dict) -> bool:
    """Epoch milliseconds that name a thing made once (a workflow's node ids: "1740638793787-source-…",
    ``id: '1740638793787'``, ``{{#1740645185279.text#}}``), not the clock of a request: any copy named
    so makes every copy one (a Dify selector's "- '1740…'"). A range ("1740…-1741…") joins nothing."""
    value = text[start:end]
    key = ("id-epoch", value)
    if key not in memo:
        memo[key] = any(
            (text[k + 13 : k + 14] == "-" and text[k + 14 : k + 15].isalpha())
            or (text[k - 1 : k] == "-" and text[k - 2 : k - 1].isalpha())
            or _ID_KEY.search(text, max(0, k - 16), k) is not None
            for k in _copies(text, memo, "epoch", value) or [start]
        )
    return memo[key]


#: a record's own key before an id ("id": "…", ``versionId: …``): a node, workflow or install of a document
#: (an n8n or Dify export), fixed where the document is; per-request ids have owners (session, request …);
#: a hex pinned after a version ("langgenius/openai:0.0.12@604c…") is a package's digest
_RECORD_ID_KEY = re.compile(
    r"""(?im)(?:^[ \t]*(?:-[ \t]+)?|["'])(?:id|uuid|(?:node|version|webhook|workflow|instance|credential|template|case)_?id"""
    r"""|(?:source|target)_?handle)["']?[ \t]*[:=][ \t]*["']?\Z|\d\.\d+(?:\.\d+)?@\Z"""
)
#: … and its own moments ("createdAt": "2024-12-23T16:09:38.737Z", ``updated_at:``): when it was saved
_RECORD_MOMENT_KEY = re.compile(
    r"""(?im)(?:^[ \t]*(?:-[ \t]+)?|["'])(?:created|updated|modified|saved|last_?modified)_?(?:at|on|time|date)?["']?"""
    r"""[ \t]*:[ \t]*["']?\Z"""
)
_ID_KINDS = frozenset(("uuid", "hex-id", "base64-id", "request-id"))


def record_value(text: str, start: int, kind: str, memo: dict) -> bool:
    """The id or moment at ``start`` is the value of a record's own key (``"id": "03b4…"``,
    ``"instanceId": …``, ``"createdAt": …``); a UUID when any copy of it is ("- 8c46…" in a list)."""
    key = _RECORD_ID_KEY if kind in _ID_KINDS else _RECORD_MOMENT_KEY if kind in ("time", "date") else None
    if key is None:
        return False
    if kind != "uuid":
        return key.search(text, max(0, start - 48), start) is not None
    value = text[start : start + 36]
    memo_key = ("record-uuid", value)
    if memo_key not in memo:
        copies = _copies(text, memo, "uuid", value) or [start]
        memo[memo_key] = any(key.search(text, max(0, k - 48), k) or _listed_ids(text, k) for k in copies)
    return memo[memo_key]


#: a YAML key naming ids whose list items follow ("dataset_ids:", "tool_ids:")
_IDS_KEY = re.compile(
    r"[ \t]*(?:-[ \t]+)?(?!(?:request|req|session|trace|run|conversation|message|msg|thread|call)[_-]?ids)"
    r"(?:[\w-]*[_-]ids|[a-z]+Ids|ids)[ \t]*:[ \t]*\r?"
)
_LIST_ITEM = re.compile(r"[ \t]*-[ \t]+[\"']?")


def _listed_ids(text: str, at: int) -> bool:
    """The value at ``at`` is an item of a YAML list under a key naming ids (``dataset_ids:\n  - 8c46…``)."""
    ls = text.rfind("\n", 0, at) + 1
    if not _LIST_ITEM.fullmatch(text, ls, at):
        return False
    for _ in range(200):  # up the list's items to the key that holds them
        if ls == 0:
            return False
        above = text.rfind("\n", 0, ls - 1) + 1
        line_end = ls - 1
        if not _LIST_ITEM.match(text, above, line_end):
            return _IDS_KEY.fullmatch(text, above, line_end) is not None
        ls = above
    return False
