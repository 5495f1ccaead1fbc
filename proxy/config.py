"""The proxy's configuration, checked once at start.

:class:`ProxyConfig` (frozen), built by ``prefixgate serve`` from its flags and config file
(:mod:`proxy.config_file`) or by tests; one :class:`~proxy.upstream_spec.UpstreamSpec` (re-exported
here with its URL checks) per upstream: the three defaults at the root (``openai``, ``anthropic``,
``gemini`` from ``--*-base``) and the named ones under ``/NAME/`` (one named like a default
replaces it). :attr:`ProxyConfig.all_upstreams` name the only hosts the proxy ever contacts.
Nothing here reads the network or opens files (:func:`default_state_dir` only computes a path).
See docs/configuration.md.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.sizes import KIB, MIB
from proxy.upstream_spec import PROTOCOLS, RESERVED_NAMES, UpstreamSpec, check_base_url, check_base_urls

__all__ = [
    "PROTOCOLS",
    "RESERVED_NAMES",
    "ProxyConfig",
    "UpstreamSpec",
    "check_base_url",
    "check_base_urls",
    "default_state_dir",
    "is_loopback",
]

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"
GEMINI_DEFAULT_BASE = "https://generativelanguage.googleapis.com"


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
    """What ``prefixgate serve`` runs with (its flags: docs/configuration.md).

    ``upstreams``: the config file's named upstreams, served under ``/NAME/``. ``store``:
    ``memory``, a ``redis://`` URL or ``redis-cluster://host:port[,host:port...]``.
    ``tenant_secret_file`` / ``tenant_secret`` (``$PREFIXGATE_TENANT_SECRET``, never printed): a
    shared tenant secret (:func:`proxy.tenant.resolve_secret`). ``ledger``: the SQLite path (None:
    ``<state_dir>/ledger.sqlite``; ``:memory:`` allowed). ``max_header_size``: request line +
    headers, 431 above. Seconds: ``pool_timeout`` a request waits for a free upstream connection
    (then 503 ``pool_exhausted``), ``store_timeout`` the Redis look-up's deadline (then skipped
    until a probe answers), ``shutdown_timeout`` what requests in flight get before they are cut,
    ``openai_ttl_s`` / ``anthropic_ttl_s`` how long a prefix counts as seen before (OpenAI: up to
    1 h; Anthropic: 5 m, 1 h with ttl ``1h``). ``max_connections``: upstream connections at most
    (None: from the fd limit, :mod:`proxy.transport.limits`). ``store_max_entries``: the memory
    store's LRU bound across tenants. ``prices``: a price file overriding the bundled one.
    ``rewrite``: ``off`` | ``safe`` | ``aggressive`` (a request's ``x-prefixgate-rewrite``
    overrides it; the old boolean flag's on is ``safe``). ``gemini_auto_cache``: every gemini
    upstream makes explicit caches for prefixes seen ``gemini_auto_cache_after`` times in an hour.
    """

    openai_base: str = OPENAI_DEFAULT_BASE
    anthropic_base: str = ANTHROPIC_DEFAULT_BASE
    gemini_base: str = GEMINI_DEFAULT_BASE
    upstreams: tuple[UpstreamSpec, ...] = ()
    host: str = "127.0.0.1"
    port: int = 8080
    store: str = "memory"
    tenant_secret_file: str | None = None
    tenant_secret: str | None = field(default=None, repr=False)
    ledger: str | None = None
    state_dir: Path = field(default_factory=default_state_dir)
    max_body: int = 32 * MIB
    max_header_size: int = 64 * KIB
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    write_timeout: float = 60.0
    pool_timeout: float = 5.0
    max_connections: int | None = None
    store_max_entries: int = 200_000
    store_timeout: float = 0.1
    openai_ttl_s: float = 3600.0
    anthropic_ttl_s: float = 3600.0
    admin_token: str | None = None
    log_bodies: bool = False
    prices: str | None = None
    rewrite: str = "off"
    shutdown_timeout: float = 10.0
    gemini_auto_cache: bool = False
    gemini_auto_cache_after: int = 3

    def __post_init__(self) -> None:
        if isinstance(self.rewrite, bool):
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
            if self.gemini_auto_cache and spec.protocol == "gemini" and spec.pooled:
                raise ValueError(
                    f"--gemini-auto-cache: upstream {spec.name!r} is a pool of base_urls, and an explicit cache lives on one server"
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
            # a ValueError on a malformed node list, quoting the URL without its password
            cluster_nodes(self.store)
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
