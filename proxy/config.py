"""The proxy's configuration, checked once at start.

One frozen dataclass, built by ``prefixgate serve`` from its flags (and by tests
directly). Nothing here reads the network or opens files except :func:`default_state_dir`,
which only computes a path.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.sizes import KIB, MIB

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"


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
    host: str = "127.0.0.1"
    port: int = 8080
    store: str = "memory"  # "memory" or a redis:// URL
    ledger: str | None = None  # SQLite path; None → <state_dir>/ledger.sqlite; ":memory:" allowed
    state_dir: Path = field(default_factory=default_state_dir)
    max_body: int = 32 * MIB
    max_header_size: int = 64 * KIB  # request line + headers; 431 above (proxy.server.head_limit)
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    write_timeout: float = 60.0
    pool_timeout: float = 10.0
    max_connections: int = 512
    store_max_entries: int = 200_000  # memory store: LRU bound across tenants
    store_timeout: float = 0.1  # Redis store: deadline per look-up, s; then skipped (breaker) until a probe answers
    openai_ttl_s: float = 3600.0  # how long a prefix counts as "seen before" (OpenAI: up to 1h)
    anthropic_ttl_s: float = 3600.0  # Anthropic: 5m by default, 1h with ttl "1h"
    admin_token: str | None = None
    log_bodies: bool = False
    prices: str | None = None  # price file overriding the bundled one
    rewrite: str = "off"  # off | safe | aggressive (analyzer.rewrite); a request's x-prefixgate-rewrite overrides it
    shutdown_timeout: float = 10.0  # s that in-flight requests get on shutdown before being cut (proxy.server.shutdown)

    def __post_init__(self) -> None:
        if isinstance(self.rewrite, bool):  # the old on/off flag: on was the safe rewrites
            object.__setattr__(self, "rewrite", "safe" if self.rewrite else "off")
        if self.rewrite not in ("off", "safe", "aggressive"):
            raise ValueError(f"--rewrite must be off, safe or aggressive, got {self.rewrite!r}")
        for name in ("openai_base", "anthropic_base"):
            value = getattr(self, name)
            if not value.startswith(("http://", "https://")):
                raise ValueError(f"--{name.replace('_', '-')} must be an http(s) URL, got {value!r}")
            object.__setattr__(self, name, value.rstrip("/"))
        if not (self.store == "memory" or self.store.startswith(("redis://", "rediss://", "unix://"))):
            raise ValueError(f"--store must be 'memory' or a redis:// URL, got {self.store!r}")
        if self.max_body <= 0:
            raise ValueError("--max-body must be positive")
        if self.max_header_size < KIB:
            raise ValueError("--max-header-size must be at least 1KiB")
        if self.shutdown_timeout < 0:
            raise ValueError("--shutdown-timeout must be 0 or more")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port out of range: {self.port}")
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
    def ledger_path(self) -> str:
        return self.ledger if self.ledger else str(self.state_dir / "ledger.sqlite")
