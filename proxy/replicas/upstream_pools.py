"""The pools of one proxy: a :class:`~.replica_set.ReplicaSet` per upstream with several base URLs.

:class:`Pools` builds them from the config; :meth:`Pools.start` starts their active health checks
(through the proxy's own upstream pool: a ``GET`` of the check path, read to the end) and, on a
Redis store, the in-flight counts and heads shared with the other proxies (:mod:`.redis_board`);
:meth:`Pools.aclose` stops all of it, each part within its budget. :meth:`Pools.get` is the
handler's look-up, :meth:`Pools.snapshot` the stats' and metrics'. It sends no client's request
(:mod:`proxy.replica_send` does). See docs/several-engines.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import httpx

from proxy.replicas.health import HealthPolicy
from proxy.replicas.health_checks import HealthChecks, Probe
from proxy.replicas.redis_board import RedisBoard
from proxy.replicas.replica_set import ReplicaSet
from proxy.replicas.shared_heads import SharedHeads
from proxy.replicas.shared_load import SharedLoad

if TYPE_CHECKING:
    from proxy.config import UpstreamSpec
    from proxy.transport.upstream import UpstreamPool

log = logging.getLogger("prefixgate.replicas")
CLOSE_S = 2.0  # per background part at shutdown


def pool_probe(pool: UpstreamPool) -> Probe:
    """A health probe through the proxy's upstream pool: ok on a 2xx, its body read to the end (so
    the connection is reused). The caller bounds it (:class:`.health_checks.HealthChecks`)."""

    async def probe(url: str) -> bool:
        response = await pool.send("GET", httpx.URL(url), [(b"Accept", b"application/json")], b"")
        try:
            await response.aread()
        finally:
            await response.aclose()
        return 200 <= response.status_code < 300

    return probe


class Pools:
    def __init__(self, specs: Iterable[UpstreamSpec] = (), store: str = "memory") -> None:
        self.sets: dict[str, ReplicaSet] = {}
        for spec in specs:
            if spec.pooled:
                every = spec.health_interval or None
                health = HealthPolicy(check_interval_s=every, check_path=spec.health_path)
                self.sets[spec.name] = ReplicaSet(spec.base_urls, spec.routing, health=health)
        self.store = store
        self.proxy_id = f"{os.getpid()}-{os.urandom(4).hex()}"
        self._parts: list[HealthChecks | SharedLoad | SharedHeads] = []
        self._boards: list[RedisBoard] = []

    def __bool__(self) -> bool:
        return bool(self.sets)

    def get(self, upstream: str) -> ReplicaSet | None:
        return self.sets.get(upstream)

    def start(self, pool: UpstreamPool) -> None:
        """The background parts: health checks, and the shared load and heads on a Redis store."""
        for name, replicas in self.sets.items():
            if replicas.health_policy.check_interval_s is not None:
                self._parts.append(HealthChecks(replicas, pool_probe(pool)))
            if self.store != "memory":
                board = RedisBoard(self.store, name)
                self._boards.append(board)
                replicas.shared = SharedLoad(board, self.proxy_id, replicas.local_load)
                self._parts += [replicas.shared, SharedHeads(board, replicas.heads)]
        for part in self._parts:
            part.start()

    async def aclose(self) -> None:
        for part in self._parts:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(part.aclose(), CLOSE_S)
        self._parts.clear()
        for board in self._boards:
            await board.aclose()
        self._boards.clear()

    def snapshot(self) -> dict[str, dict]:
        """Per pooled upstream: :meth:`~.replica_set.ReplicaSet.snapshot`, plus what its shared
        board did (``shared_failures``: refreshes that failed or missed their deadline)."""
        out = {}
        for name, replicas in self.sets.items():
            out[name] = replicas.snapshot()
            if replicas.shared is not None:
                out[name]["shared_failures"] = replicas.shared.failures
        return out
