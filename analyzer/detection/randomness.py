"""Does a string look generated? Entropy, hex and base64 id shapes, and what a UUID's own
bits say (RFC 9562 version and variant, nil and patterned values, vendor families).

Pure functions over one string (or, for families, the UUIDs of one text); no context.
"""

from __future__ import annotations

import math
import re
from collections import Counter

#: a longer run is a blob (an encoded file, a key block), not a per-request id
MAX_ID_CHARS = 512

_REPEAT = re.compile(r"(.)\1{4}")
_WORDY = re.compile(r"[a-z]{7}|[A-Z][a-z]{5,}[A-Z][a-z]{3}")
_PATH = re.compile(r"/?[\w.-]+(?:/[\w.-]+)+/?")
_COUNTING = {s[i : i + 6] for s in ("0123456789abcdef", "fedcba9876543210") for i in range(11)}


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def looks_random_hex(s: str) -> bool:
    if len(s) > MAX_ID_CHARS:
        return False
    digits = sum(ch.isdigit() for ch in s)
    letters = len(s) - digits
    return digits >= 2 and letters >= 2 and entropy(s.lower()) >= 3.0 and not _REPEAT.search(s)


def looks_random_b64(s: str) -> bool:
    core = s.rstrip("=")
    if len(core) > MAX_ID_CHARS:
        return False
    upper = sum(ch.isupper() for ch in core)
    lower = sum(ch.islower() for ch in core)
    digits = sum(ch.isdigit() for ch in core)
    if upper < 2 or lower < 2 or digits < (1 if len(core) >= 32 else 2) or _WORDY.search(core):
        return False  # words and CamelCase identifiers
    if "/" in core and _PATH.fullmatch(core) and core.strip("/").count("/") >= 2:
        return False  # a path
    return entropy(core) >= 3.8


def uuid_kind(u: str) -> str:
    """``"random"`` (v4), ``"time"`` (v1, v6, v7), ``"custom"`` (v8), ``"name"`` (v3, v5: derived from a
    fixed name), ``"pattern"`` (nil, max, repeated or counting digits, the Bluetooth base) or
    ``"nonstandard"`` (no RFC version or variant: a hand-made or vendor constant)."""
    h = u.replace("-", "").lower()
    if (
        len(set(h)) <= 4
        or h[20:] == "00805f9b34fb"
        or any(h[i : i + 6] in _COUNTING for i in range(27))
        or _REPEAT.search(h)
    ):
        return "pattern"
    version, variant = h[12], h[16]
    if variant not in "89ab":
        return "nonstandard"
    return {
        "4": "random",
        "1": "time",
        "6": "time",
        "7": "time",
        "8": "custom",
        "3": "name",
        "5": "name",
    }.get(version, "nonstandard")


def uuid_families(uuids: list[str]) -> set[str]:
    """UUIDs sharing their last 19 hex digits with another one: a vendor's base UUID with a
    varying short id (custom GATT services and characteristics), never per-request values."""
    tails = Counter(u[14:] for u in {u.lower() for u in uuids})
    return {u for u in uuids if tails[u.lower()[14:]] > 1}


_CROCKFORD = {ch: i for i, ch in enumerate("0123456789ABCDEFGHJKMNPQRSTVWXYZ")}


def ulid_ms(value: str) -> int:
    """The milliseconds a ULID was minted at (its first ten characters, Crockford base 32)."""
    ms = 0
    for ch in value[:10]:
        ms = ms * 32 + _CROCKFORD[ch]
    return ms


#: how a finding names each kind of :func:`uuid_kind` kept
UUID_KIND_WORDS = {
    "random": "a random (version 4) UUID",
    "time": "a time-based UUID",
    "custom": "a version 8 UUID",
}
