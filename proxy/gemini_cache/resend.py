"""When a request the auto-cache rewrote is refused for its ``cachedContent``: resend it as sent.

:func:`names_cached_content` tells such a refusal (a 400 / 403 / 404 whose body, read up to
:data:`MAX_ERROR_BODY` bytes and decoded within a bound, names ``cachedContent``, any spelling)
from any other error; the hook then puts the body as the client sent it back for the relay to
send once, before any byte went to the client. :func:`mark_resent` marks the one record and
headers (:data:`RESENT_ID`, ``x-prefixgate-gemini-cache: resent``).
It decides nothing else and makes no call.
See docs/providers.md (Gemini explicit caching, automated).
"""

from __future__ import annotations

import re
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proxy.exchange import Exchange

HEADER = "x-prefixgate-gemini-cache"
REWRITE_ID = "gemini-cached-content"
RESENT_ID = "gemini-cached-content-resent"
CACHE_ERRORS = frozenset((400, 403, 404))
MAX_ERROR_BODY = 64 * 1024
_NAMES_CACHE = re.compile(rb"cached[_ ]?content", re.IGNORECASE)


def may_be_refusal(status: int) -> bool:
    return status in CACHE_ERRORS


def decoded(body: bytes, encoding: str | None) -> bytes:
    """``body`` as sent (identity), or gzip / deflate decoded up to :data:`MAX_ERROR_BODY`;
    b"" for an encoding it does not read (then no refusal is found: the error passes). A
    ``deflate`` that is not zlib-wrapped is read as raw deflate, as some servers send it."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return b""
    try:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS)
        return inflater.decompress(body, MAX_ERROR_BODY)
    except zlib.error:
        if encoding == "deflate":
            try:
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, MAX_ERROR_BODY)
            except zlib.error:
                return b""
        return b""


def names_cached_content(status: int, body: bytes, encoding: str | None = None) -> bool:
    """True when a 400 / 403 / 404 with this (bounded) body is about the request's cachedContent."""
    return (
        may_be_refusal(status) and _NAMES_CACHE.search(decoded(body[:MAX_ERROR_BODY], encoding)) is not None
    )


def mark_resent(exchange: Exchange) -> None:
    """The request's record and headers say its cache was refused and the original body resent."""
    record = exchange.record
    if RESENT_ID not in record.rewrites:
        record.rewrites = [*record.rewrites, RESENT_ID]
    exchange.headers["x-prefixgate-rewrites"] = ",".join(record.rewrites)
    exchange.headers[HEADER] = "resent"
