"""How many upstream connections the pool may hold: sized from the file-descriptor limit.

Each proxied stream holds two sockets (the client's and the upstream's), so the default pool is
half of what the process may open, less :data:`RESERVED_FDS` for everything else.
:func:`raise_fd_limit` lifts the soft ``RLIMIT_NOFILE`` to the hard limit (``serve`` does at
start), :func:`fd_limit` reads it, :func:`pool_size` turns it into a pool size (at least
:data:`MIN_POOL`), :func:`fds_needed` says what ``n`` streams want (for ``--max-connections``).

It opens no connection and keeps no state. See docs/request-path.md.
"""

from __future__ import annotations

import logging

try:
    import resource
except ImportError:
    # not on this platform (Windows): no limit to read or raise
    resource = None  # type: ignore[assignment]

#: the listening socket, the ledger, Redis, logs, epoll, the interpreter's own
RESERVED_FDS = 128
MIN_POOL = 16
#: what an unlimited (RLIM_INFINITY) descriptor limit counts as: Linux refuses more than
#: fs.nr_open, 2^20 by default
UNLIMITED = 1 << 20
log = logging.getLogger("prefixgate.transport")


def fd_limit() -> int:
    """The process's soft ``RLIMIT_NOFILE`` (``UNLIMITED`` for none; 1024 where unknown)."""
    if resource is None:
        return 1024
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return UNLIMITED if soft == resource.RLIM_INFINITY or soft > UNLIMITED else soft


def raise_fd_limit() -> tuple[int, int]:
    """Lift the soft descriptor limit to the hard one when allowed; (before, after). A
    refusal (a container's seccomp, an odd platform) is logged and leaves the limit as it was."""
    before = fd_limit()
    if resource is None:
        return before, before
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY or soft >= target:
        return before, before
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        log.warning("could not raise the open-file limit from %d to %d (%s)", soft, target, exc)
    return before, fd_limit()


def pool_size(limit: int | None = None) -> int:
    """Upstream connections for a process that may open ``limit`` descriptors (now, if None):
    ``(limit - RESERVED_FDS) // 2``, at least :data:`MIN_POOL`."""
    limit = fd_limit() if limit is None else limit
    return max(MIN_POOL, (limit - RESERVED_FDS) // 2)


def fds_needed(max_connections: int) -> int:
    """Descriptors ``max_connections`` concurrent streams want (client + upstream socket each)."""
    return 2 * max_connections + RESERVED_FDS
