"""Which upstream a request goes to, and the exact upstream URL.

- Anthropic: ``/v1/messages`` and everything under it (``count_tokens``, batches), and any
  ``/v1/`` request that carries an ``anthropic-version`` or ``x-api-key`` header (so the
  Anthropic SDK's ``/v1/models`` reaches Anthropic). URL: ``anthropic_base + path``.
- OpenAI: every other ``/v1/`` path (chat/completions, responses, completions, embeddings,
  models, files, …). URL: ``openai_base + path-without-/v1`` (the base already ends in
  ``/v1``, as the OpenAI SDK's base URL does).

Never an open proxy: the upstream URL is always one of the two configured bases with the
request's path appended; scheme, host and port come from the base only, whatever the
``Host`` header or an absolute request target says. Paths that could climb out of the
base path (``.``/``..`` segments, empty segments, encoded ``/``, ``\\`` or ``.``, control
characters) are refused with :class:`BadPath`. Percent-encoded unreserved characters
(``%63hat`` for ``chat``, RFC 3986 §6.2.2.2) are decoded first, so an equivalent spelling
of a path is routed, analysed and counted as that path. The query string is kept byte for
byte.

This module does not send anything and does not look at bodies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

import httpx

OPENAI = "openai"
ANTHROPIC = "anthropic"

# Segments or encodings that could change which path on the upstream is reached.
_UNSAFE = re.compile(rb"%2[ef]|%5c|%00|\\|[\x00-\x20\x7f]", re.IGNORECASE)
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~")


def _decode_unreserved(match: re.Match[bytes]) -> bytes:
    byte = int(match.group(1), 16)
    return bytes((byte,)) if byte in _UNRESERVED else match.group(0)


class BadPath(ValueError):
    """The path is not one the proxy forwards (404) or could escape the base (400)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Target:
    provider: str  # "openai" | "anthropic"
    route: str  # the client's path without the query, e.g. "/v1/chat/completions"
    url: httpx.URL  # the upstream URL, query included


def _check_path(raw_path: bytes) -> bytes:
    """The path to route and forward (unreserved escapes decoded), or :class:`BadPath`."""
    if _UNSAFE.search(raw_path):
        raise BadPath(400, "path contains encoded separators, dots or control characters")
    if b"%" in raw_path:
        raw_path = _ESCAPE.sub(_decode_unreserved, raw_path)
    if not raw_path.startswith(b"/v1/") or len(raw_path) <= 4:
        raise BadPath(404, "prefixgate forwards /v1/... paths only")
    segments = raw_path.split(b"/")[1:]
    if any(seg in (b"", b".", b"..") for seg in segments[:-1]) or segments[-1] in (b".", b".."):
        raise BadPath(400, "path contains empty, '.' or '..' segments")
    try:
        raw_path.decode("ascii")
    except UnicodeDecodeError:
        raise BadPath(400, "path is not ASCII (percent-encode it)") from None
    return raw_path


def is_anthropic(route: str, headers: Mapping[str, str]) -> bool:
    if route == "/v1/messages" or route.startswith("/v1/messages/"):
        return True
    return "anthropic-version" in headers or "x-api-key" in headers


class Router:
    """Resolves ``(raw_path, query, headers)`` to a :class:`Target` on a configured base."""

    MAX_CACHED_URLS = 4096

    def __init__(self, openai_base: str, anthropic_base: str) -> None:
        self._bases = {OPENAI: httpx.URL(openai_base), ANTHROPIC: httpx.URL(anthropic_base)}
        self._urls: dict[tuple[str, bytes], httpx.URL] = {}  # parsing a URL costs more than the rest of routing
        for provider, base in self._bases.items():
            if base.scheme not in ("http", "https") or not base.host:
                raise ValueError(f"{provider} base must be an absolute http(s) URL, got {base}")

    def resolve(self, raw_path: bytes, query: bytes, headers: Mapping[str, str]) -> Target:
        raw_path = _check_path(raw_path)
        route = raw_path.decode("ascii")
        provider = ANTHROPIC if is_anthropic(route, headers) else OPENAI
        base = self._bases[provider]
        suffix = raw_path[3:] if provider == OPENAI else raw_path  # OpenAI base already has /v1
        upstream_path = base.raw_path.split(b"?", 1)[0].rstrip(b"/") + suffix
        if query:
            upstream_path += b"?" + query
        url = self._urls.get((provider, upstream_path))
        if url is None:
            if len(self._urls) >= self.MAX_CACHED_URLS:
                self._urls.clear()
            url = self._urls[(provider, upstream_path)] = base.copy_with(raw_path=upstream_path)
        return Target(provider, route, url)
