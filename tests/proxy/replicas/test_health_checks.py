"""Active checks against real loopback servers: a dead or failing replica leaves, and comes back."""

from __future__ import annotations

import asyncio
import time

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from proxy.replicas.health import HealthPolicy
from proxy.replicas.health_checks import HealthChecks, check_url
from proxy.replicas.replica_set import ReplicaSet
from tests.support.servers import free_port, serve


def engine(state: dict) -> Starlette:
    async def models(request):
        return JSONResponse({"data": []}, status_code=state["status"])

    return Starlette(routes=[Route("/v1/models", models), Route("/health", models)])


def test_check_urls_are_written_from_the_servers_root():
    assert check_url("http://h:8000/v1", "/v1/models") == "http://h:8000/v1/models"
    assert check_url("http://h:8000/v1", "/health") == "http://h:8000/health"
    assert check_url("http://gw/engine-1/v1", "/health") == "http://gw/engine-1/health"
    assert check_url("http://h:8000", "/health") == "http://h:8000/health"


async def test_failing_and_dead_replicas_leave_and_a_recovered_one_returns():
    good, bad = {"status": 200}, {"status": 503}
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with serve(engine(good)) as a, serve(engine(bad)) as b:
        policy = HealthPolicy(
            failures_to_open=2, first_backoff_s=0.05, max_backoff_s=0.05, check_interval_s=0.01
        )
        rs = ReplicaSet([f"{a}/v1", f"{b}/v1", dead], health=policy)
        checks = HealthChecks(rs)
        for _ in range(2):
            await checks.check_once()
        states = [r.health.state for r in rs.replicas]
        assert states == ["up", "down", "down"]
        assert rs.replicas[1].health.last_error == "health check failed"
        assert rs.replicas[2].health.last_error.startswith("health check: ")
        assert {rs.pick(f"k{i}".encode()).replica.url for i in range(20)} == {f"{a}/v1"}
        bad["status"] = 200
        await asyncio.sleep(0.06)  # the backoff passes
        await checks.check_once()
        assert [r.health.state for r in rs.replicas] == ["up", "up", "down"]


async def test_a_hung_probe_is_bounded_by_the_check_timeout():
    async def hung(url: str) -> bool:
        await asyncio.Event().wait()
        return True

    policy = HealthPolicy(failures_to_open=1, check_timeout_s=0.05)
    rs = ReplicaSet(["http://127.0.0.1:9/v1"], health=policy)
    checks = HealthChecks(rs, hung)
    began = time.perf_counter()
    await checks.check_once()
    assert time.perf_counter() - began < 1.0
    assert rs.replicas[0].health.state == "down"
    assert rs.replicas[0].health.last_error == "health check timed out"


async def test_the_background_loop_runs_and_stops():
    seen: list[str] = []

    async def probe(url: str) -> bool:
        seen.append(url)
        return True

    rs = ReplicaSet(["http://127.0.0.1:9/v1"], health=HealthPolicy(check_interval_s=0.01))
    checks = HealthChecks(rs, probe)
    checks.start()
    await asyncio.sleep(0.1)
    await checks.aclose()
    assert checks.rounds >= 3 and seen[0] == "http://127.0.0.1:9/v1/models"


def test_checks_need_an_interval():
    with pytest.raises(ValueError, match="off"):
        HealthChecks(ReplicaSet(["http://a/v1"], health=HealthPolicy(check_interval_s=None)))
