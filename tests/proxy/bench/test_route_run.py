"""proxy.bench.route_run: after a replica was stopped, the run's pool snapshot is read once the pool
has marked it not up (its next health check may come after the run's last request)."""

from __future__ import annotations

import asyncio

import httpx

from proxy.bench.route_run import UPSTREAM, _settled_stats


def _stats(states: list[str]) -> dict:
    return {"replicas": {UPSTREAM: {"replicas": [{"health": {"state": s}} for s in states]}}}


def _client(answers: list[dict], seen: list[int]) -> httpx.AsyncClient:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return httpx.Response(200, json=answers[min(len(seen), len(answers)) - 1])

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


def test_after_a_stop_the_snapshot_waits_for_the_pool_to_notice():
    seen: list[int] = []
    answers = [_stats(["up", "up", "up"])] * 3 + [_stats(["down", "up", "up"])]

    async def go() -> dict:
        async with _client(answers, seen) as http:
            return await _settled_stats(http, "http://proxy", killed=True)

    assert asyncio.run(go()) == _stats(["down", "up", "up"]) and len(seen) == 4


def test_with_no_stop_the_first_snapshot_is_the_one_and_a_stop_never_noticed_gives_up():
    seen: list[int] = []

    async def go(killed: bool, wait_s: float) -> dict:
        async with _client([_stats(["up", "up"])], seen) as http:
            return await _settled_stats(http, "http://proxy", killed=killed, wait_s=wait_s)

    assert asyncio.run(go(False, 10.0)) == _stats(["up", "up"]) and len(seen) == 1
    assert asyncio.run(go(True, 0.3)) == _stats(["up", "up"]) and len(seen) > 2
