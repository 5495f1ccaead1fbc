"""The proxy's configuration, checked once at start.

:class:`ProxyConfig` (frozen), built by ``prefixgate serve`` from its flags and config file
(:mod:`proxy.config_file`) or by tests; one :class:`UpstreamSpec` per upstream: the three
defaults at the root (``openai``, ``anthropic``, ``gemini`` from ``--*-base``) and the named ones
under ``/NAME/`` (one named like a default replaces it). :attr:`ProxyConfig.all_upstreams` are
the only hosts the proxy ever contacts. Nothing here reads the network or opens files
(:func:`default_state_dir` only computes a path). See docs/configuration.md.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from analyzer.cache_rules import RULES
from analyzer.sizes import KIB, MIB

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"
GEMINI_DEFAULT_BASE = "https://generativelanguage.googleapis.com"
PROTOCOLS = ("openai", "anthropic", "gemini")
# Path segments the root routes use: no upstream may be named like them.
RESERVED_NAMES = frozenset({"v1", "v1beta", "v1alpha", "prefixgate", "upload"})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


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
        parts.port  # noqa: B018  # raises on a port that is not a number
        httpx.URL(value)  # what the transport will parse: an invalid IDNA host fails here, not at start
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


@dataclass(frozen=True)
class UpstreamSpec:
    """One upstream the proxy may contact.

    ``name`` is also its path prefix (``/NAME/...``); ``protocol`` the wire format its
    clients speak (``openai`` | ``anthropic`` | ``gemini``); ``base_url`` what you would give
    that protocol's SDK as its base URL; ``rules`` whose caching rules and usage fields apply
    (:data:`analyzer.cache_rules.RULES`; default: the protocol's); ``prices`` an optional
    price-table key for the money layer. ``line`` is where a config file defined it (for
    error messages only). ``auto_cache`` (gemini only) turns on :mod:`proxy.gemini_cache` for it.
    """

    name: str
    protocol: str
    base_url: str
    rules: str | None = None
    prices: str | None = None
    auto_cache: bool = (
        False  # gemini only: make explicit caches for repeated prefixes (as --gemini-auto-cache does for all)
    )
    line: int | None = field(default=None, compare=False)

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
        object.__setattr__(
            self, "base_url", check_base_url(self.base_url, f"base_url of upstream {self.name!r}")
        )
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

    @property
    def prefix(self) -> str:
        return "/" + self.name


def default_state_dir() -> Path:
    """Where the install's secret and default ledger live: ``$PREFIXGATE_HOME`` or
    ``$XDG_STATE_HOME/prefixgate`` or ``~/.local/state/prefixgate``."""
    if os.environ.get("PREFIXGATE_HOME"):
        return Path(os.environ["PREFIXGATE_HOME"])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "prefixgate"


def is_loopback(host: str) -> bool:
    """True only for a host that binds loopback interfaces alone. An empty host is NOT
    loopback: uvicorn (asyncio ``create_server``) binds every interface for ``""``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ProxyConfig:
    openai_base: str = OPENAI_DEFAULT_BASE
    anthropic_base: str = ANTHROPIC_DEFAULT_BASE
    gemini_base: str = GEMINI_DEFAULT_BASE
    upstreams: tuple[UpstreamSpec, ...] = ()  # named upstreams (the config file), served under /NAME/
    host: str = "127.0.0.1"
    port: int = 8080
    store: str = "memory"  # "memory", a redis:// URL or redis-cluster://host:port[,host:port...]
    tenant_secret_file: str | None = None  # shared tenant secret (proxy.tenant.resolve_secret)
    tenant_secret: str | None = field(
        default=None, repr=False
    )  # the same inline ($PREFIXGATE_TENANT_SECRET); never printed
    ledger: str | None = None  # SQLite path; None → <state_dir>/ledger.sqlite; ":memory:" allowed
    state_dir: Path = field(default_factory=default_state_dir)
    max_body: int = 32 * MIB
    max_header_size: int = 64 * KIB  # request line + headers; 431 above (proxy.server.head_limit)
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    write_timeout: float = 60.0
    pool_timeout: float = (
        5.0  # s a request waits for a free upstream connection; then 503 pool_exhausted (Retry-After)
    )
    max_connections: int | None = (
        None  # upstream connections at most; None: from the fd limit (proxy.transport.limits)
    )
    store_max_entries: int = 200_000  # memory store: LRU bound across tenants
    store_timeout: float = (
        0.1  # Redis store: deadline per look-up, s; then skipped (breaker) until a probe answers
    )
    openai_ttl_s: float = 3600.0  # how long a prefix counts as "seen before" (OpenAI: up to 1h)
    anthropic_ttl_s: float = 3600.0  # Anthropic: 5m by default, 1h with ttl "1h"
    admin_token: str | None = None
    log_bodies: bool = False
    prices: str | None = None  # price file overriding the bundled one
    rewrite: str = (
        "off"  # off | safe | aggressive (analyzer.rewrite); a request's x-prefixgate-rewrite overrides it
    )
    shutdown_timeout: float = (
        10.0  # s that in-flight requests get on shutdown before being cut (proxy.server.shutdown)
    )
    gemini_auto_cache: bool = (
        False  # every gemini upstream makes explicit caches for repeated prefixes (proxy.gemini_cache)
    )
    gemini_auto_cache_after: int = 3  # sightings of a prefix within an hour before its cache is made

    def __post_init__(self) -> None:
        if isinstance(self.rewrite, bool):  # the old on/off flag: on was the safe rewrites
            object.__setattr__(self, "rewrite", "safe" if self.rewrite else "off")
        if self.rewrite not in ("off", "safe", "aggressive"):
            raise ValueError(f"--rewrite must be off, safe or aggressive, got {self.rewrite!r}")
        for name in ("openai_base", "anthropic_base", "gemini_base"):
            object.__setattr__(self, name, check_base_url(getattr(self, name), f"--{name.replace('_', '-')}"))
        object.__setattr__(self, "upstreams", tuple(self.upstreams))
        seen: dict[str, UpstreamSpec] = {}
        for spec in self.upstreams:
            if not isinstance(spec, UpstreamSpec):
                raise ValueError(f"upstreams must be UpstreamSpec, got {type(spec).__name__}")
            other = seen.get(spec.name.lower())
            if other is not None:
                raise ValueError(
                    f"duplicate upstream prefix {spec.prefix!r} (upstreams {other.name!r} and {spec.name!r})"
                )
            seen[spec.name.lower()] = spec
            if spec.name.lower() in PROTOCOLS and spec.name not in PROTOCOLS:
                raise ValueError(
                    f"duplicate upstream prefix {spec.prefix!r}: the default {spec.name.lower()!r} upstream has it"
                )
            if spec.name in PROTOCOLS and spec.protocol != spec.name:
                raise ValueError(
                    f"upstream {spec.name!r} replaces the default one and must keep protocol {spec.name!r}"
                )
        from proxy.store.redis_urls import cluster_nodes, redacted

        if not (
            self.store == "memory"
            or self.store.startswith(("redis://", "rediss://", "unix://", "redis-cluster://"))
        ):
            raise ValueError(
                f"--store must be 'memory', a redis:// URL or redis-cluster://host:port[,host:port...], got {redacted(self.store)!r}"
            )
        if self.store.startswith("redis-cluster://"):
            cluster_nodes(
                self.store
            )  # ValueError on a malformed node list (quoting the URL without its password)
        if self.max_body <= 0:
            raise ValueError("--max-body must be positive")
        if self.max_header_size < KIB:
            raise ValueError("--max-header-size must be at least 1KiB")
        if (
            isinstance(self.gemini_auto_cache_after, bool)
            or not isinstance(self.gemini_auto_cache_after, int)
            or self.gemini_auto_cache_after < 1
        ):
            raise ValueError(
                f"--gemini-auto-cache-after must be an integer >= 1, got {self.gemini_auto_cache_after!r}"
            )
        if self.shutdown_timeout < 0:
            raise ValueError("--shutdown-timeout must be 0 or more")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port out of range: {self.port}")
        if self.max_connections is not None and (
            isinstance(self.max_connections, bool)
            or not isinstance(self.max_connections, int)
            or self.max_connections < 1
        ):
            raise ValueError(f"--max-connections must be an integer >= 1, got {self.max_connections!r}")
        for name in ("connect_timeout", "read_timeout", "write_timeout", "pool_timeout", "store_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if not is_loopback(self.host) and not self.admin_token:
            raise ValueError(
                f"refusing to serve on non-loopback host {self.host!r} without --admin-token: "
                "/prefixgate/* shows cost and prefix data"
            )
        object.__setattr__(self, "state_dir", Path(self.state_dir))

    @property
    def all_upstreams(self) -> tuple[UpstreamSpec, ...]:
        """The defaults (unless a named upstream replaces one), then the named ones."""
        named = {spec.name for spec in self.upstreams}
        defaults = tuple(
            UpstreamSpec(protocol, protocol, base)
            for protocol, base in (
                ("openai", self.openai_base),
                ("anthropic", self.anthropic_base),
                ("gemini", self.gemini_base),
            )
            if protocol not in named
        )
        return defaults + self.upstreams

    @property
    def ledger_path(self) -> str:
        return self.ledger if self.ledger else str(self.state_dir / "ledger.sqlite")
