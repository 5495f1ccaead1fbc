"""When a request the auto-cache rewrote is refused for its ``cachedContent``: resend it as sent.

A rewritten request (:meth:`proxy.gemini_cache.manager.GeminiAutoCache.before`) references a
cache the proxy made; the upstream may have lost it (deleted, expired early, another key)
and then refuses the request. Google answers such a request 403 ``PERMISSION_DENIED``
("CachedContent not found (or permission denied)"), 404 ``NOT_FOUND``, or 400
``INVALID_ARGUMENT`` whose message names the cache (a model that does not match it, a bad
name); the emulator (:mod:`proxy.emulator.gemini_cached_contents`) answers the same.
:func:`names_cached_content` tells such a refusal from any other error: a 400 / 403 / 404
whose body (read by the relay up to :data:`MAX_ERROR_BODY` bytes; gzip or deflate decoded,
bounded too) names ``cachedContent`` (any case, ``cached_content`` or "cached content").
The relay (:mod:`proxy.relay`) asks through the auto-cache's hook
(:class:`proxy.gemini_cache.hook.AutoCacheHook`), which then puts the exchange's
``fallback_body`` (the body as the client sent it) back for the relay to send once, before any
byte went to the client, streaming or not; :func:`mark_resent` marks the request's one record
and headers: rewrite id :data:`RESENT_ID`, ``x-prefixgate-gemini-cache: resent``; the hook also
tells the manager, which drops the entry at once, so later requests go as sent until the
prefix is cached again.

This module decides nothing else and makes no call.
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
    b"" for an encoding it does not read (then no refusal is found: the error passes)."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return b""
    try:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS)
        return inflater.decompress(body, MAX_ERROR_BODY)
    except zlib.error:
        if encoding == "deflate":  # raw deflate, as some servers send it
            try:
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, MAX_ERROR_BODY)
            except zlib.error:
                return b""
        return b""


def names_cached_content(status: int, body: bytes, encoding: str | None = None) -> bool:
    """True when a 400 / 403 / 404 with this (bounded) body is about the request's cachedContent."""
    return may_be_refusal(status) and _NAMES_CACHE.search(decoded(body[:MAX_ERROR_BODY], encoding)) is not None


def mark_resent(exchange: Exchange) -> None:
    """The request's record and headers say its cache was refused and the original body resent."""
    record = exchange.record
    if RESENT_ID not in record.rewrites:
        record.rewrites = [*record.rewrites, RESENT_ID]
    exchange.headers["x-prefixgate-rewrites"] = ",".join(record.rewrites)
    exchange.headers[HEADER] = "resent"
