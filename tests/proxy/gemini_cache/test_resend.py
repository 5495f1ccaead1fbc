"""proxy.gemini_cache.resend: which refusals are about the cachedContent, read bounded."""

from __future__ import annotations

import gzip
import zlib

import orjson

from proxy.accounting.records import RequestRecord
from proxy.exchange import Exchange
from proxy.gemini_cache.resend import (
    MAX_ERROR_BODY,
    RESENT_ID,
    decoded,
    mark_resent,
    names_cached_content,
)


def google(status: int, code: str, message: str) -> bytes:
    return orjson.dumps({"error": {"code": status, "message": message, "status": code}})


def test_google_and_emulator_refusals_name_the_cache():
    assert names_cached_content(
        403, google(403, "PERMISSION_DENIED", "CachedContent not found (or permission denied)")
    )
    assert names_cached_content(
        404, google(404, "NOT_FOUND", "CachedContent not found (or permission denied): cachedContents/x")
    )
    assert names_cached_content(
        400, google(400, "INVALID_ARGUMENT", "Model m does not match the model of cachedContents/x")
    )
    assert names_cached_content(400, google(400, "INVALID_ARGUMENT", "Invalid value at 'cached_content'"))


def test_other_errors_and_statuses_pass():
    assert not names_cached_content(400, google(400, "INVALID_ARGUMENT", "contents must not be empty"))
    assert not names_cached_content(
        429, google(429, "RESOURCE_EXHAUSTED", "cachedContent quota")
    )  # not a refusal status
    assert not names_cached_content(500, google(500, "INTERNAL", "CachedContent backend failed"))
    assert not names_cached_content(404, b"")
    # only the first MAX_ERROR_BODY bytes are looked at
    assert not names_cached_content(404, b" " * MAX_ERROR_BODY + b"cachedContent")


def test_compressed_bodies_are_read_bounded():
    body = google(403, "PERMISSION_DENIED", "CachedContent not found")
    assert names_cached_content(403, gzip.compress(body), "gzip")
    assert names_cached_content(403, zlib.compress(body), "deflate")
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert names_cached_content(403, raw.compress(body) + raw.flush(), "deflate")
    assert not names_cached_content(403, body, "br")  # an encoding it does not read: the error passes
    assert decoded(b"not gzip", "gzip") == b""
    bomb = gzip.compress(b"x" * (50 * MAX_ERROR_BODY))
    assert len(decoded(bomb, "gzip")) == MAX_ERROR_BODY


def test_mark_resent_is_once_and_sets_the_headers():
    exchange = Exchange(
        RequestRecord(
            "r", 0.0, "t", "gemini", "/v1beta/models/m:generateContent", rewrites=["gemini-cached-content"]
        )
    )
    mark_resent(exchange)
    mark_resent(exchange)
    assert exchange.record.rewrites == ["gemini-cached-content", RESENT_ID]
    assert exchange.headers == {
        "x-prefixgate-rewrites": f"gemini-cached-content,{RESENT_ID}",
        "x-prefixgate-gemini-cache": "resent",
    }
