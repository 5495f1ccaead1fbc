"""Load held (the issue's third hole): thousands of concurrent streams through one proxy.

Before: 1,000 concurrent 10 s streams through one ``prefixgate serve`` gave 512 answers and 488
``504 upstream_timeout`` after 10 s, though the upstream answered all 1,000 directly: the pool
held at most 512 connections, and waiting for one was reported as the upstream's timeout.

:func:`test_thousands_of_held_streams_through_one_proxy` is the soak: a tiny streaming upstream
(:mod:`proxy.bench.stream_upstream`, its own process) sends each stream's first event at once and
holds the rest until ``N`` streams are open at the same time (a barrier: that many were in
flight through the proxy together, by construction, not by timing), then ends them all. ``N`` is
5,000 where the open-file limit allows it (each stream costs the proxy two sockets), else the
most it allows, printed. None may fail, for a proxy limit or any other reason. Bounded: the
client gives up at 35 s; about 10-20 s on the 2-core machine.

:func:`test_a_full_pool_answers_503_pool_exhausted_and_counts_it` checks the limit's other side
with a small pool: requests past it wait ``--pool-timeout``, then get the proxy's own 503
``pool_exhausted`` with ``Retry-After`` in the provider's shape (never a 504), counted in the
ledger, ``/prefixgate/stats``, the metrics and the health's ``pool``.

Time to first byte, proxy against direct, is measured by ``prefixgate bench proxy --held N``
(:mod:`proxy.bench.held`), not asserted here.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from proxy.bench.held import configure, open_streams, run_client, stream_upstream, summary
from proxy.bench.procs import free_ports
from proxy.transport.limits import RESERVED_FDS, fd_limit, raise_fd_limit
from tests.support.procs import ledger_rows, log_problems
from tests.support.proxy_process import proxy_process

pytestmark = pytest.mark.e2e

TARGET = 5000


def _streams_this_machine_allows() -> int:
    """5,000, or what the open-file limit allows: the proxy needs two sockets per stream, this
    process and the upstream one each (all three get the same hard limit)."""
    raise_fd_limit()
    return min(TARGET, (fd_limit() - 2 * RESERVED_FDS) // 2)


@pytest.mark.reliability
def test_thousands_of_held_streams_through_one_proxy(tmp_path):
    n = _streams_this_machine_allows()
    assert n >= 1000, f"the open-file limit ({fd_limit()}) allows only {n} streams; raise it (ulimit -n)"
    (port,) = free_ports(1)
    began = time.monotonic()
    with stream_upstream(port, tmp_path, barrier=n, hold_s=30.0) as upstream:
        with proxy_process(tmp_path, upstream, "--log-level", "warning") as proxy:
            before = httpx.get(f"{proxy.base}/prefixgate/health", timeout=10).json()["pool"]
            proxy_port = int(proxy.base.rsplit(":", 1)[1])
            configure(upstream, barrier=n, hold_s=30.0)
            results = run_client(open_streams(proxy_port, n, ramp_s=0.0, timeout_s=35.0))
            upstream_saw = httpx.get(f"{upstream}/_stats", timeout=10).json()
            health = httpx.get(f"{proxy.base}/prefixgate/health", timeout=10).json()
            rss_mib = proxy.rss_bytes() / 2**20
            stats = httpx.get(f"{proxy.base}/prefixgate/stats", timeout=10).json()
        log = proxy.output()
    elapsed = time.monotonic() - began
    got = summary(results)
    print(
        f"\n{n} held streams through one proxy in {elapsed:.1f} s: {got}; upstream saw {upstream_saw}; "
        f"pool {health['pool']}; proxy RSS {rss_mib:.0f} MiB"
    )
    assert before["sized_by"] == "fd_limit" and before["max_connections"] >= n
    assert got["failed"] == {} and got["ok"] == n
    assert upstream_saw["max_open"] == n, (
        "the streams were not all in flight at once"
    )  # the barrier released them
    assert upstream_saw["served"] == n
    assert health["pool"]["exhausted_total"] == 0 and health["pool"]["waited_total"] == 0
    assert stats["errors"] == 0
    assert log_problems(log) == []
    rows = ledger_rows(proxy.ledger)
    assert (
        len(rows) == n
        and {row["status"] for row in rows} == {200}
        and {row["error"] for row in rows} == {None}
    )


def test_a_full_pool_answers_503_pool_exhausted_and_counts_it(tmp_path):
    (port,) = free_ports(1)
    with stream_upstream(port, tmp_path, hold_s=2.0) as upstream:
        with proxy_process(tmp_path, upstream, "--max-connections", "20", "--pool-timeout", "0.5") as proxy:
            proxy_port = int(proxy.base.rsplit(":", 1)[1])

            async def load():
                streams = asyncio.ensure_future(open_streams(proxy_port, 30, timeout_s=20.0))
                await asyncio.sleep(0.3)  # 20 streams hold the pool, 10 wait for it
                async with httpx.AsyncClient(timeout=10) as client:
                    during = (await client.get(f"{proxy.base}/prefixgate/health")).json()["pool"]
                    body = (
                        b'{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}'
                    )
                    refused = await client.post(
                        f"{proxy.base}/v1/chat/completions",
                        content=body,
                        headers={"authorization": "Bearer sk-x", "content-type": "application/json"},
                    )
                return await streams, during, refused

            results, during, refused = run_client(load())
            health = httpx.get(f"{proxy.base}/prefixgate/health", timeout=10).json()
            stats = httpx.get(f"{proxy.base}/prefixgate/stats", timeout=10).json()
            metrics = httpx.get(f"{proxy.base}/prefixgate/metrics", timeout=10).text
    got = summary(results)
    assert got["ok"] == 20 and got["failed"] == {"pool_exhausted": 10}, got
    assert (
        during["max_connections"] == 20
        and during["in_use"] == 20
        and during["waiting"] >= 1
        and during["sized_by"] == "--max-connections"
    )
    assert (
        refused.status_code == 503
        and refused.headers["retry-after"] == "1"
        and refused.headers["x-prefixgate-error"] == "pool_exhausted"
    )
    assert (
        refused.json()["error"]["code"] == "pool_exhausted"
    )  # OpenAI's error shape: the SDK retries it after Retry-After
    assert health["pool"]["exhausted_total"] == 11 and health["pool"]["in_use"] == 0
    assert stats["errors"] == 11
    assert 'prefixgate_proxy_errors_total{kind="pool_exhausted",provider="openai"} 11.0' in metrics
    assert (
        "prefixgate_pool_exhausted_total 11.0" in metrics
        and "prefixgate_pool_max_connections 20.0" in metrics
    )
    rows = ledger_rows(proxy.ledger)
    assert sorted((row["status"], row["error"]) for row in rows).count((503, "pool_exhausted")) == 11
