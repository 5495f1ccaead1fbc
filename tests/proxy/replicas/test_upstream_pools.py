"""The proxy's pools: one per upstream with several base URLs; active health checks through the
proxy's own upstream pool take a dead replica out and bring it back; closing is bounded."""

from __future__ import annotations

import asyncio
import time

from proxy.config import ProxyConfig, UpstreamSpec
from proxy.replicas.upstream_pools import Pools
from proxy.transport.upstream import UpstreamPool
from tests.support.engine_pool import engines
from tests.support.servers import free_port


def test_only_upstreams_with_several_urls_are_pools():
    specs = (
        UpstreamSpec("one", "openai", "http://a/v1"),
        UpstreamSpec("two", "openai", base_urls=("http://a/v1", "http://b/v1"), routing="round-robin"),
    )
    pools = Pools(specs)
    assert list(pools.sets) == ["two"] and pools.get("one") is None and bool(pools)
    assert pools.get("two").policy == "round-robin"
    assert not Pools(specs[:1])


def test_active_checks_take_a_dead_replica_out_and_keep_the_live_one_in():
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with engines(1) as ([alive], _):
        spec = UpstreamSpec("p", "openai", base_urls=(alive, dead), health_interval=0.05)

        async def main():
            pools, pool = Pools([spec]), UpstreamPool(ProxyConfig())
            pools.start(pool)
            await asyncio.sleep(0.6)
            states = {r.url: r.health.state for r in pools.get("p").replicas}
            began = time.perf_counter()
            await pools.aclose()
            closed_in = time.perf_counter() - began
            await pool.aclose()
            return states, closed_in, pools.snapshot()

        states, closed_in, snapshot = asyncio.run(main())
    assert states == {alive: "up", dead: "down"}
    assert closed_in < 2.5
    assert snapshot["p"]["replicas"][1]["health"]["failures"] >= 3
