"""Which upstream a request goes to, and the exact upstream URL: :class:`Router` → :class:`Target`.

Routes the root paths to the default Anthropic / Gemini / OpenAI upstreams (by path and by
header) and ``/NAME/…`` to the named upstreams; anything else is a 404 naming the prefixes. Never
an open proxy: the URL is one configured base plus the request's path; paths that could climb out
of the base are refused (:class:`BadPath`), encoded unreserved characters are decoded first, and
the query string is kept byte for byte. The endpoint's kind comes from :mod:`proxy.endpoints`.
It does not send anything and does not look at bodies.
See docs/request-path.md (routing) and docs/providers.md (named upstreams).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import httpx

from proxy.config import GEMINI_DEFAULT_BASE, UpstreamSpec
from proxy.endpoints import (
    ANTHROPIC,
    ENDPOINTS,
    GEMINI,
    OPENAI,
    PROVIDERS,
    Endpoint,
    Kind,
    gemini_method,
    kind_of,
)

# Segments or encodings that could change which path on the upstream is reached.
_UNSAFE = re.compile(rb"%2[ef]|%5c|%00|\\|[\x00-\x20\x7f]", re.IGNORECASE)
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~")
_GEMINI_VERSIONS = (b"/v1beta/", b"/v1/", b"/v1alpha/")


def _decode_unreserved(match: re.Match[bytes]) -> bytes:
    byte = int(match.group(1), 16)
    return bytes((byte,)) if byte in _UNRESERVED else match.group(0)


class BadPath(ValueError):
    """The path is not one the proxy forwards (404) or could escape the base (400).

    ``provider`` is the protocol whose error shape the client gets (None: guess from the
    request, see :func:`error_provider`); ``upstream`` the upstream's name when the path
    named one; ``unknown_prefix`` when its first segment names nothing the proxy serves
    (``/favicon.ico``): not a proxied request."""

    def __init__(
        self,
        status: int,
        message: str,
        provider: str | None = None,
        upstream: str | None = None,
        *,
        unknown_prefix: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider
        self.upstream = upstream
        self.unknown_prefix = unknown_prefix


@dataclass(frozen=True, slots=True)
class Target:
    """Where one request goes. ``provider``: the protocol (``"openai"`` | ``"anthropic"`` |
    ``"gemini"``); ``route``: the client's path without the query (``/v1/chat/completions``,
    ``/deepseek/v1/chat/completions``); ``url``: the upstream URL, query included; ``endpoint``:
    what the route is, read by everyone instead of the path; ``upstream``: the upstream's name (its
    path prefix) and ``rules``: whose caching rules apply (``analyzer.cache_rules.RULES``), both
    the provider's when empty; ``model``: the model the path names (Gemini), else None (the body says)."""

    provider: str
    route: str
    url: httpx.URL
    endpoint: Endpoint
    upstream: str = ""
    rules: str = ""
    model: str | None = None

    def __post_init__(self) -> None:
        if not self.upstream:
            object.__setattr__(self, "upstream", self.provider)
        if not self.rules:
            object.__setattr__(self, "rules", self.provider)


def _check_path(raw_path: bytes) -> bytes:
    """The path to route and forward (unreserved escapes decoded), or :class:`BadPath` (a 404's
    message empty: the router fills in the configured prefixes)."""
    if _UNSAFE.search(raw_path):
        raise BadPath(400, "path contains encoded separators, dots or control characters")
    if b"%" in raw_path:
        raw_path = _ESCAPE.sub(_decode_unreserved, raw_path)
    if not raw_path.startswith(b"/") or len(raw_path) < 2:
        raise BadPath(404, "")
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


def _is_gemini_root(route: str, headers: Mapping[str, str]) -> bool:
    """A root ``/v1/`` request meant for Gemini: its key header, or a ``:method`` path."""
    if (
        ":" in route
        and (route.startswith("/v1/models/") or route.startswith("/v1/tunedModels/"))
        and gemini_method(route)[1] is not None
    ):
        return True
    return "x-goog-api-key" in headers


def error_provider(path: str, headers: Mapping[str, str]) -> str:
    """The protocol whose error shape suits a request the router refused before it knew the upstream."""
    if path.startswith(("/v1beta/", "/v1alpha/")) or _is_gemini_root(path, headers):
        return GEMINI
    return ANTHROPIC if is_anthropic(path, headers) else OPENAI


@dataclass(frozen=True, slots=True)
class _Upstream:
    """An upstream as the router uses it, parsed once. ``base_path``: the base URL's path, no
    trailing ``/``; ``marker`` (openai): the segment after ``/NAME/`` that stands for
    ``base_path`` (``v1``, ``openai``, …); ``usage``: what a client's base URL under ``/NAME``
    looks like (for 404 messages)."""

    name: str
    protocol: str
    rules: str
    base: httpx.URL
    base_path: bytes
    marker: bytes
    usage: str


def _upstream(spec: UpstreamSpec) -> _Upstream:
    base = httpx.URL(spec.base_url)
    if base.scheme not in ("http", "https") or not base.host:
        raise ValueError(f"{spec.name} base must be an absolute http(s) URL, got {base}")
    base_path = base.raw_path.split(b"?", 1)[0].rstrip(b"/")
    marker = base_path.rpartition(b"/")[2] or b"v1"
    if spec.protocol == OPENAI:
        usage = f"/{spec.name}/{marker.decode('ascii')}/..."
    elif spec.protocol == ANTHROPIC:
        usage = f"/{spec.name}/v1/..."
    else:
        usage = f"/{spec.name}/v1beta/..."
    return _Upstream(spec.name, spec.protocol, spec.rules or spec.protocol, base, base_path, marker, usage)


def _printable(raw: bytes) -> str:
    return raw[:64].decode("latin-1").encode("unicode_escape").decode("ascii")


class Router:
    """Resolves ``(raw_path, query, headers)`` to a :class:`Target` on a configured base.

    ``Router(openai_base, anthropic_base)`` keeps the two-base form; ``gemini_base`` adds
    the third default and ``named`` the config file's upstreams (:class:`~proxy.config.UpstreamSpec`;
    one named like a default replaces it). :meth:`for_config` builds it from a
    :class:`~proxy.config.ProxyConfig`. A base that is not an absolute http(s) URL, or two
    upstreams with one prefix, is a ValueError. Built URLs are kept (up to
    :data:`MAX_CACHED_URLS`): parsing a URL costs more than the rest of the routing.
    """

    MAX_CACHED_URLS = 4096

    def __init__(
        self,
        openai_base: str,
        anthropic_base: str,
        gemini_base: str | None = None,
        named: Iterable[UpstreamSpec] = (),
    ) -> None:
        named = tuple(named)
        names = {spec.name for spec in named}
        bases = (
            (OPENAI, openai_base),
            (ANTHROPIC, anthropic_base),
            (GEMINI, gemini_base or GEMINI_DEFAULT_BASE),
        )
        defaults = [UpstreamSpec(p, p, b) for p, b in bases if p not in names]
        self._by_name: dict[bytes, _Upstream] = {}
        for spec in (*defaults, *named):
            up = _upstream(spec)
            key = spec.name.encode("ascii")
            if key in self._by_name:
                raise ValueError(f"duplicate upstream prefix /{spec.name}")
            self._by_name[key] = up
        self._root = {p: self._by_name[p.encode()] for p in PROVIDERS}
        self._urls: dict[tuple[str, bytes], httpx.URL] = {}
        prefixes = ", ".join(f"/{name.decode()}/" for name in self._by_name)
        self._unknown = f"this proxy serves /v1/ (openai, anthropic, gemini), /v1beta/ (gemini) and the upstream prefixes {prefixes}"

    @classmethod
    def for_config(cls, config) -> Router:
        return cls(config.openai_base, config.anthropic_base, config.gemini_base, config.upstreams)

    def _not_found(self, first: bytes) -> BadPath:
        return BadPath(
            404, f"unknown path prefix '/{_printable(first)}': {self._unknown}", OPENAI, unknown_prefix=True
        )

    def resolve(self, raw_path: bytes, query: bytes, headers: Mapping[str, str]) -> Target:
        """The request's :class:`Target`, or :class:`BadPath` (also for a target httpx cannot make
        a URL of, e.g. a ``#`` that a lax HTTP parser left in the path or query)."""
        try:
            raw_path = _check_path(raw_path)
        except BadPath as exc:
            if exc.status == 404:
                raise self._not_found(b"") from None
            raise
        end = raw_path.find(b"/", 1)
        first = raw_path[1:end] if end > 0 else raw_path[1:]
        route = raw_path.decode("ascii")
        if first == b"v1":
            if len(raw_path) <= 4:
                raise BadPath(404, f"no path after /v1/: {self._unknown}", OPENAI)
            if route.startswith("/v1/messages"):
                up = self._root[ANTHROPIC] if is_anthropic(route, headers) else self._root[OPENAI]
            elif _is_gemini_root(route, headers):
                up = self._root[GEMINI]
            else:
                up = self._root[ANTHROPIC] if is_anthropic(route, headers) else self._root[OPENAI]
            upstream_path = up.base_path + (raw_path[3:] if up.protocol == OPENAI else raw_path)
        elif first == b"v1beta" or first == b"v1alpha" or first == b"upload":
            up = self._root[GEMINI]
            upstream_path = self._named_path(up, raw_path)
        else:
            named = self._by_name.get(first)
            if named is None:
                raise self._not_found(first)
            up = named
            upstream_path = self._named_path(up, raw_path[end:] if end > 0 else b"")
        if query:
            upstream_path += b"?" + query
        key = (up.name, upstream_path)
        url = self._urls.get(key)
        if url is None:
            if len(self._urls) >= self.MAX_CACHED_URLS:
                self._urls.clear()
            try:
                url = up.base.copy_with(raw_path=upstream_path)
            except httpx.InvalidURL:
                raise BadPath(
                    400, "the request target is not a valid URL path", up.protocol, up.name
                ) from None
            self._urls[key] = url
        if up.protocol == GEMINI:
            model, kind = gemini_method(route)
            return Target(GEMINI, route, url, ENDPOINTS[GEMINI, kind or Kind.OTHER], up.name, up.rules, model)
        return Target(up.protocol, route, url, ENDPOINTS[up.protocol, kind_of(route)], up.name, up.rules)

    def _named_path(self, up: _Upstream, rest: bytes) -> bytes:
        """The upstream path for ``rest`` (the path after ``/NAME``) at a named upstream; the root's
        Gemini paths (``/v1beta/…``) take the same shapes as under ``/gemini/``, and
        ``/upload/v1beta/…`` is the SDK's file uploads."""
        if up.protocol == OPENAI:
            marker = b"/" + up.marker + b"/"
            if rest.startswith(marker) and len(rest) > len(marker):
                return up.base_path + rest[len(marker) - 1 :]
        elif up.protocol == ANTHROPIC:
            if rest.startswith(b"/v1/") and len(rest) > 4:
                return up.base_path + rest
        else:
            version = rest[7:] if rest.startswith(b"/upload/") else rest
            if any(version.startswith(v) and len(version) > len(v) for v in _GEMINI_VERSIONS):
                return up.base_path + rest
        raise BadPath(
            404, f"upstream '{up.name}' ({up.protocol}) serves {up.usage} only", up.protocol, up.name
        )
