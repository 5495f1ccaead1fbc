"""Active health checks: every ``check_interval_s``, a ``GET`` of each replica's check path.

A replica in rotation that fails its check counts a failure (as a failed request would); one
out of rotation is probed only once its backoff has passed, and a check that succeeds brings it
back. Each check is bounded by ``check_timeout_s``; the checks run in a background task, never
on a request's way. The probe is a callable (``url → ok``): :func:`http_probe` by default, the
proxy's own pool in the proxy (:func:`.upstream_pools.pool_probe`). It chooses no replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx

from proxy.replicas.periodic import Periodic
from proxy.replicas.replica_set import Replica, ReplicaSet

Probe = Callable[[str], Awaitable[bool]]


def check_url(base_url: str, path: str) -> str:
    """The check URL: ``path`` on the base URL without its trailing ``/v1`` (an OpenAI base URL
    ends with it; ``/v1/models`` and ``/health`` are both written from the server's root)."""
    root = base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url
    return root + path


def http_probe(timeout_s: float) -> Probe:
    """A probe that is ok when the URL answers 2xx within ``timeout_s`` (no environment proxies)."""

    async def probe(url: str) -> bool:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            response = await client.get(url)
            return 200 <= response.status_code < 300

    return probe


class HealthChecks(Periodic):
    def __init__(self, replicas: ReplicaSet, probe: Probe | None = None) -> None:
        policy = replicas.health_policy
        if policy.check_interval_s is None:
            raise ValueError("active health checks are off (check_interval_s is None)")
        self.replicas, self.policy = replicas, policy
        self.probe = probe or http_probe(policy.check_timeout_s)
        self.rounds = 0

    async def _ok(self, replica: Replica) -> tuple[bool, str | None]:
        try:
            async with asyncio.timeout(self.policy.check_timeout_s):
                ok = await self.probe(check_url(replica.url, self.policy.check_path))
        except TimeoutError:
            return False, "health check timed out"
        except Exception as exc:  # the replica's failure, whatever the probe raised
            return False, f"health check: {type(exc).__name__}"
        return ok, None if ok else "health check failed"

    async def _check(self, replica: Replica) -> None:
        health = replica.health
        if health.in_rotation:
            ok, error = await self._ok(replica)
            if ok:
                health.success()
            else:
                health.failure(error or "health check failed")
        elif health.try_probe():
            ok, error = await self._ok(replica)
            health.probe_done(ok, error)

    async def check_once(self) -> None:
        """One round: every replica at once."""
        await asyncio.gather(*(self._check(r) for r in self.replicas.replicas))
        self.rounds += 1

    async def tick(self) -> None:
        await self.check_once()

    def period_s(self) -> float:
        assert self.policy.check_interval_s is not None
        return self.policy.check_interval_s
