"""Fleet totals over real replicas: two proxies (real uvicorn) on one real Redis and on a
3-node Redis Cluster, driven with the official openai SDK through a loopback emulator."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from proxy.accounting.fleet import Fleet
from proxy.accounting.fleet_redis import FleetRedis
from tests.support.gateways import replicas
from tests.support.payloads import CHAT
from tests.support.redis_procs import redis_cluster
from tests.support.sdk_clients import oai

pytestmark = pytest.mark.e2e


@pytest.fixture
def cluster(tmp_path_factory):
    yield from redis_cluster(tmp_path_factory)


def _stats(base: str) -> dict:
    return httpx.get(f"{base}/prefixgate/stats").json()


def _settled(bases: list[str], sent: int) -> list[dict]:
    """Every replica's stats once its fleet view counts ``sent`` (flushes run every 100 ms and
    reads are cached 1 s: a bounded wait, not a timing assertion)."""
    deadline = time.monotonic() + 20
    while True:
        out = [_stats(b) for b in bases]
        if all(s["fleet"].get("requests") == sent for s in out) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def _fleet_requests(text: str) -> float:
    return sum(
        s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "prefixgate_fleet_requests_total"
    )


def _read_fleet(store: str) -> dict:
    async def read():
        fleet = Fleet(FleetRedis(store))
        try:
            return await fleet.view()
        finally:
            await fleet.aclose()

    return asyncio.run(read())


def _send(bases: list[str], per_replica: tuple[int, ...]) -> None:
    for base, n in zip(bases, per_replica):
        client = oai(base)
        for i in range(n):
            client.chat.completions.create(
                model="gpt-4o", messages=[*CHAT, {"role": "user", "content": f"q{i}"}], max_tokens=4
            )


def _check_two_replicas(tmp_path, store: str) -> None:
    with replicas(tmp_path, store=store, store_timeout=2.0) as (bases, _apps):
        _send(bases, (5, 3))
        a, b = _settled(bases, 8)
        assert a["fleet"]["requests"] == b["fleet"]["requests"] == a["requests"] + b["requests"] == 8
        assert a["fleet"]["available"] is True and a["fleet"]["flush"]["pending_requests"] == 0
        assert a["fleet"]["output_tokens"] == a["output_tokens"] + b["output_tokens"]
        assert a["fleet"]["cost_usd"] == pytest.approx(a["cost_usd"] + b["cost_usd"], abs=2e-9)
        assert [m["model"] for m in a["fleet"]["models"]] == ["gpt-4o"] and set(a["fleet"]["providers"]) == {
            "openai"
        }
        for base in bases:
            assert _fleet_requests(httpx.get(f"{base}/prefixgate/metrics").text) == 8
        hourly = httpx.get(f"{bases[1]}/prefixgate/api/fleet?since=1h").json()
        assert hourly["requests"] == 8 and sum(p["requests"] for p in hourly["series"]["points"]) == 8
        assert httpx.get(f"{bases[0]}/prefixgate/api/summary").json()["fleet"] is True
        _send(bases, (2, 2))  # then a graceful stop, no wait: the final flush sends these
    assert _read_fleet(store)["requests"] == 12


def test_two_replicas_on_one_redis_count_one_fleet(tmp_path, redis_url):
    url, prefix = redis_url
    _check_two_replicas(tmp_path, f"{url}?key_prefix={prefix}")


def test_two_replicas_on_a_redis_cluster_count_one_fleet(tmp_path, cluster):
    _check_two_replicas(tmp_path, f"{cluster.url}?key_prefix=pg-fleet:")


def test_the_memory_store_has_no_fleet(tmp_path):
    with replicas(tmp_path, n=1) as ((base,), _):
        _send([base], (1,))
        assert "fleet" not in _stats(base)
        assert httpx.get(f"{base}/prefixgate/api/fleet").status_code == 404
        assert httpx.get(f"{base}/prefixgate/api/summary").json()["fleet"] is False
        assert "prefixgate_fleet_" not in httpx.get(f"{base}/prefixgate/metrics").text


def test_redis_down_says_so_and_never_fails_a_request(tmp_path, redis_url):
    from tests.support.servers import free_port

    _, prefix = redis_url
    with replicas(tmp_path, n=1, store=f"redis://127.0.0.1:{free_port()}/0?key_prefix={prefix}") as (
        (base,),
        _,
    ):
        _send([base], (2,))
        stats = _stats(base)
        assert stats["requests"] == 2
        assert stats["fleet"]["available"] is False and stats["fleet"]["error"]
        assert stats["fleet"]["flush"]["pending_requests"] == 2  # kept for when Redis answers
        fleet = httpx.get(f"{base}/prefixgate/api/fleet")
        assert fleet.status_code == 200 and fleet.json()["available"] is False
        assert "prefixgate_fleet_available 0.0" in httpx.get(f"{base}/prefixgate/metrics").text
