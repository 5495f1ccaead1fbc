"""One upstream the proxy may contact, checked once at start: :class:`UpstreamSpec`.

A name (its path prefix), a protocol, and one base URL or a pool of them (``base_urls``: replicas
of one engine, chosen per request by ``routing``, with ``health_path`` / ``health_interval`` for
the active checks). :func:`check_base_url` refuses a URL that could carry a key or climb out of
its path; :func:`check_base_urls` an empty list or a duplicate. Every error names its key.
It builds no pool and reads no network (:mod:`proxy.replicas` does). See docs/configuration.md
and docs/several-engines.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from analyzer.cache_rules import RULES
from proxy.replicas.load_share import POLICIES, PREFIX

PROTOCOLS = ("openai", "anthropic", "gemini")
# Path segments the root routes use: no upstream may be named like them.
RESERVED_NAMES = frozenset({"v1", "v1beta", "v1alpha", "prefixgate", "upload"})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_REPLICAS = 64  # base_urls of one upstream at most (each is a metric label)
DEFAULT_HEALTH_PATH = "/v1/models"  # prefixgate local answers it; vLLM and SGLang answer /health too
DEFAULT_HEALTH_INTERVAL_S = 5.0


def check_base_url(value: str, what: str) -> str:
    """``value`` without a trailing ``/``; ValueError unless it is an absolute http(s) URL
    with a host and no credentials, query or fragment (a key there would be written to
    the config and sent to every client's upstream)."""
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValueError(f"{what} must be an http(s) URL, got {value!r}")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{what} must not contain spaces or control characters: {value!r}")
    try:
        parts = urlsplit(value)
        # a port that is not a number raises, and so does what the transport will parse (an
        # invalid IDNA host fails here, not at start)
        _ = parts.port
        httpx.URL(value)
    except (ValueError, httpx.InvalidURL, UnicodeError):
        raise ValueError(f"{what} is not a valid URL: {value!r}") from None
    if not parts.hostname:
        raise ValueError(f"{what} has no host: {value!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError(f"{what} must not carry credentials (the client's key passes through): {value!r}")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise ValueError(f"{what} must not carry a query or fragment: {value!r}")
    if any(seg in (".", "..") for seg in parts.path.split("/")):
        raise ValueError(f"{what} must not hold '.' or '..' segments: {value!r}")
    return value.rstrip("/")


def check_base_urls(urls: object, what: str) -> tuple[str, ...]:
    """The URLs checked and without a trailing ``/``; ValueError naming ``what`` on an empty
    list, a duplicate (``http://a/v1`` and ``http://a/v1/`` are one) or more than
    :data:`MAX_REPLICAS`."""
    if isinstance(urls, str) or not isinstance(urls, (list, tuple)) or not urls:
        raise ValueError(f"{what} must be a non-empty list of URLs, got {urls!r}")
    if len(urls) > MAX_REPLICAS:
        raise ValueError(f"{what} lists {len(urls)} URLs; at most {MAX_REPLICAS}")
    out: list[str] = []
    for i, url in enumerate(urls):
        norm = check_base_url(url, f"{what}[{i}]")
        if norm in out:
            raise ValueError(f"{what} lists {norm!r} twice")
        out.append(norm)
    return tuple(out)


@dataclass(frozen=True)
class UpstreamSpec:
    """One upstream the proxy may contact.

    ``name`` is also its path prefix (``/NAME/...``); ``protocol`` the wire format its
    clients speak (``openai`` | ``anthropic`` | ``gemini``); ``base_url`` what you would give
    that protocol's SDK as its base URL; ``rules`` whose caching rules and usage fields apply
    (:data:`analyzer.cache_rules.RULES`; default: the protocol's); ``prices`` an optional
    price-table key for the money layer. ``line`` is where a config file defined it (for
    error messages only). ``auto_cache`` (gemini only) turns on :mod:`proxy.gemini_cache` for it:
    explicit caches for repeated prefixes, as ``--gemini-auto-cache`` does for all.

    ``base_urls``: the replicas of a pool (one path on several hosts; empty: ``base_url`` alone,
    which is then the first); ``routing``: how a request picks one (:data:`POLICIES`);
    ``health_path`` and ``health_interval`` (seconds; 0: no active checks) their active checks.
    """

    name: str
    protocol: str
    base_url: str = ""
    rules: str | None = None
    prices: str | None = None
    auto_cache: bool = False
    line: int | None = field(default=None, compare=False)
    base_urls: tuple[str, ...] = ()
    routing: str = PREFIX
    health_path: str = DEFAULT_HEALTH_PATH
    health_interval: float = DEFAULT_HEALTH_INTERVAL_S

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(
                f"upstream name must be 1-64 of A-Z a-z 0-9 _ . - (it is the path prefix), got {self.name!r}"
            )
        if self.name.lower() in RESERVED_NAMES:
            raise ValueError(f"upstream name {self.name!r} is reserved (the proxy's own /{self.name} routes)")
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"unknown protocol {self.protocol!r} for upstream {self.name!r} (expected openai, anthropic or gemini)"
            )
        self._check_urls()
        rules = self.protocol if self.rules is None else self.rules
        if rules not in RULES:
            raise ValueError(
                f"unknown rules {rules!r} for upstream {self.name!r} (expected one of {', '.join(RULES)})"
            )
        object.__setattr__(self, "rules", rules)
        if self.prices is not None and (not isinstance(self.prices, str) or not self.prices):
            raise ValueError(f"prices of upstream {self.name!r} must be a non-empty string")
        if not isinstance(self.auto_cache, bool):
            raise ValueError(
                f"auto_cache of upstream {self.name!r} must be true or false, got {self.auto_cache!r}"
            )
        if self.auto_cache and self.protocol != "gemini":
            raise ValueError(
                f"auto_cache of upstream {self.name!r}: only gemini upstreams make explicit caches (protocol is {self.protocol!r})"
            )
        if self.auto_cache and self.pooled:
            raise ValueError(
                f"auto_cache of upstream {self.name!r}: an explicit cache lives on one server, not on a pool of base_urls"
            )
        self._check_pool_keys()

    def _check_urls(self) -> None:
        if not self.base_urls:
            url = check_base_url(self.base_url, f"base_url of upstream {self.name!r}")
            object.__setattr__(self, "base_url", url)
            object.__setattr__(self, "base_urls", (url,))
            return
        if self.base_url:
            raise ValueError(f"upstream {self.name!r}: give base_url or base_urls, not both")
        urls = check_base_urls(self.base_urls, f"base_urls of upstream {self.name!r}")
        paths = {urlsplit(u).path.rstrip("/") for u in urls}
        if len(paths) > 1:
            raise ValueError(
                f"base_urls of upstream {self.name!r} must share one path (replicas of one engine), got {sorted(paths)}"
            )
        object.__setattr__(self, "base_urls", urls)
        object.__setattr__(self, "base_url", urls[0])

    def _check_pool_keys(self) -> None:
        if self.routing not in POLICIES:
            raise ValueError(
                f"routing of upstream {self.name!r} must be one of {', '.join(POLICIES)}, got {self.routing!r}"
            )
        path = self.health_path
        if not isinstance(path, str) or not path.startswith("/") or any(c in path for c in "?# \t\r\n"):
            raise ValueError(
                f"health_path of upstream {self.name!r} must be a path starting with '/', got {path!r}"
            )
        every = self.health_interval
        if (
            isinstance(every, bool)
            or not isinstance(every, (int, float))
            or not math.isfinite(every)
            or every < 0
        ):
            raise ValueError(
                f"health_interval of upstream {self.name!r} must be seconds >= 0 (0: no active checks), got {every!r}"
            )

    @property
    def prefix(self) -> str:
        return "/" + self.name

    @property
    def pooled(self) -> bool:
        """More than one base URL: a pool of replicas, routed per request."""
        return len(self.base_urls) > 1
