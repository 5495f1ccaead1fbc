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

The router also says what kind of endpoint the path is, once per request
(:class:`Endpoint`, read by the analysis, the handler, the usage tap and the relay): its
:class:`Kind` from the path's last segments (``/chat/completions``, ``/completions``,
``/responses``, ``/messages``, ``/embeddings``, else ``other``; a trailing ``/`` ignored),
whether a ``POST`` there is billed (its response's usage counted), whether the provider
caches prompt prefixes there, the shape of its usage block, and whether an OpenAI stream
there carries usage only when asked. Every other module reads these facts from the
:class:`Target`; none looks at the path suffix again.

This module does not send anything and does not look at bodies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
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


class Kind(Enum):
    """What a path is, by its last segments."""

    CHAT = "chat"  # .../chat/completions
    COMPLETIONS = "completions"  # .../completions (legacy text completions)
    RESPONSES = "responses"  # .../responses
    MESSAGES = "messages"  # .../messages
    EMBEDDINGS = "embeddings"  # .../embeddings
    OTHER = "other"  # models, files, batches, count_tokens, retrievals, …


_SUFFIXES = (
    ("/chat/completions", Kind.CHAT),  # before "/completions", which it also ends with
    ("/completions", Kind.COMPLETIONS),
    ("/responses", Kind.RESPONSES),
    ("/messages", Kind.MESSAGES),
    ("/embeddings", Kind.EMBEDDINGS),
)
_CACHING = frozenset({Kind.CHAT, Kind.COMPLETIONS, Kind.RESPONSES, Kind.MESSAGES})
_ASKS_STREAM_USAGE = frozenset({Kind.CHAT, Kind.COMPLETIONS})


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The facts about one (provider, :class:`Kind`); one shared instance per pair.

    ``usage`` names the usage block's shape, and with it how a stream carries usage:
    ``"chat"`` (OpenAI chat and completions: a final ``choices: []`` chunk, only with
    ``stream_options.include_usage``), ``"responses"`` (the ``response.completed`` event's
    ``response.usage``), ``"anthropic"`` (split between ``message_start`` and
    ``message_delta``). ``ask_stream_usage``: the proxy must ask for that final chunk
    itself when the client did not.
    """

    kind: Kind
    billable: bool  # a POST here generates (billed once): its response's usage is counted
    caches: bool  # the provider caches prompt prefixes here (the chain goes to the store)
    usage: str  # "anthropic" | "responses" | "chat"
    ask_stream_usage: bool


def _endpoint(provider: str, kind: Kind) -> Endpoint:
    usage = "anthropic" if provider == ANTHROPIC else "responses" if kind is Kind.RESPONSES else "chat"
    return Endpoint(kind, kind is not Kind.OTHER, kind in _CACHING, usage, provider == OPENAI and kind in _ASKS_STREAM_USAGE)


_ENDPOINTS = {(provider, kind): _endpoint(provider, kind) for provider in (OPENAI, ANTHROPIC) for kind in Kind}


def _kind_of(route: str) -> Kind:
    route = route.rstrip("/")
    for suffix, kind in _SUFFIXES:
        if route.endswith(suffix):
            return kind
    return Kind.OTHER


def endpoint_for(provider: str, route: str) -> Endpoint:
    """The :class:`Endpoint` of ``route`` at ``provider`` (shared, never allocated)."""
    return _ENDPOINTS[provider, _kind_of(route)]


@dataclass(frozen=True, slots=True)
class Target:
    provider: str  # "openai" | "anthropic"
    route: str  # the client's path without the query, e.g. "/v1/chat/completions"
    url: httpx.URL  # the upstream URL, query included
    endpoint: Endpoint  # what the route is: read by everyone instead of the path


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
        return Target(provider, route, url, endpoint_for(provider, route))
