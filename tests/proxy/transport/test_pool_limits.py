"""The pool's limits: sized from the open-file limit, a slot wait with its own deadline and
error (503 ``pool_exhausted``, never the upstream's 504), what the pool holds, counted."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx
import pytest

from proxy.config import ProxyConfig
from proxy.errors import POOL_EXHAUSTED, error_response
from proxy.transport import H1Transport
from proxy.transport.limits import MIN_POOL, RESERVED_FDS, fd_limit, fds_needed, pool_size
from proxy.transport.upstream import UpstreamError, UpstreamPool
from tests.support.scripted_upstream import TIMEOUT, Scripted, fetch, run

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny"
SLOW = [(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", 0), (b"x", 0.4)]


def test_pool_size_follows_the_fd_limit():
    assert pool_size(20_000) == (20_000 - RESERVED_FDS) // 2
    assert pool_size(1024) == (1024 - RESERVED_FDS) // 2
    assert pool_size(64) == MIN_POOL
    assert fds_needed(pool_size(20_000)) <= 20_000
    assert pool_size() == pool_size(fd_limit())


def test_the_soft_fd_limit_is_raised_to_the_hard_one():
    code = (
        "import resource\n"
        "from proxy.transport.limits import raise_fd_limit\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "before, after = raise_fd_limit()\n"
        "print(before, after, min(hard, 1 << 20))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="."
    ).stdout.split()
    before, after, hard = map(int, out)
    assert (before, after) == (256, hard)


def test_stats_count_slots_in_use_idle_waiting_and_exhausted():
    async def go():
        async with Scripted([SLOW, OK, OK]) as srv:
            t = H1Transport(max_connections=1)
            first = asyncio.create_task(fetch(t, srv.url))
            await asyncio.sleep(0.1)
            busy = t.stats()
            waiter = asyncio.create_task(fetch(t, srv.url, timeout={**TIMEOUT, "pool": 0.1}))
            await asyncio.sleep(0.02)
            waiting = t.stats()
            with pytest.raises(httpx.PoolTimeout):
                await waiter
            await first
            after = t.stats()
            await fetch(t, srv.url)  # the freed slot and its idle connection serve the next one at once
            await t.aclose()
            return busy, waiting, after, t.stats()

    busy, waiting, after, closed = run(go())
    assert busy == {
        "max_connections": 1,
        "in_use": 1,
        "idle": 0,
        "waiting": 0,
        "waited_total": 0,
        "exhausted_total": 0,
    }
    assert waiting["waiting"] == 1 and waiting["in_use"] == 1
    assert after == {
        "max_connections": 1,
        "in_use": 0,
        "idle": 1,
        "waiting": 0,
        "waited_total": 1,
        "exhausted_total": 1,
    }
    assert closed["idle"] == 0 and closed["in_use"] == 0


def test_a_waiting_send_gets_the_slot_freed_within_its_deadline():
    async def go():
        async with Scripted([SLOW, OK]) as srv:
            t = H1Transport(max_connections=1)
            first = asyncio.create_task(fetch(t, srv.url))
            await asyncio.sleep(0.05)
            _, chunks = await fetch(t, srv.url, timeout={**TIMEOUT, "pool": 5.0})
            await first
            return chunks, t.stats()

    chunks, stats = run(go())
    assert chunks == [b"y"] and stats["waited_total"] == 1 and stats["exhausted_total"] == 0


def test_the_pool_bounds_the_sockets_it_holds_busy_or_idle():
    """Idle connections count against ``max_connections``: a new connection to another
    origin closes the oldest idle one first."""

    async def go():
        async with Scripted([OK] * 4) as a, Scripted([OK] * 4) as b:
            t = H1Transport(max_connections=2)
            r1 = asyncio.create_task(fetch(t, a.url))
            r2 = asyncio.create_task(fetch(t, a.url))
            await asyncio.gather(r1, r2)
            two_idle = t.stats()["idle"]
            await fetch(t, b.url)
            await asyncio.sleep(0.05)
            held = t.stats()
            await t.aclose()
            return two_idle, held, a.connections, b.connections

    two_idle, held, a_conns, b_conns = run(go())
    assert two_idle == 2
    assert held["idle"] + held["in_use"] <= 2 and held["idle"] == 2  # one of a's closed, b's kept
    assert (a_conns, b_conns) == (2, 1)


def test_a_pool_timeout_is_the_proxys_503_with_retry_after_not_the_upstreams_504():
    async def go():
        async with Scripted([SLOW, OK]) as srv:
            up = UpstreamPool(ProxyConfig(max_connections=1, pool_timeout=0.05))
            url = httpx.URL(srv.url + "/v1/x")
            first = asyncio.create_task(up.send("POST", url, [], b"{}"))
            await asyncio.sleep(0.05)
            with pytest.raises(UpstreamError) as caught:
                await up.send("POST", url, [], b"{}")
            response = await first
            await response.aread()
            await response.aclose()
            stats = up.pool_stats()
            await up.aclose()
            return caught.value, stats

    error, stats = run(go())
    assert (
        error.error is POOL_EXHAUSTED and error.error.status == 503 and error.error.kind == "pool_exhausted"
    )
    assert "--max-connections" in error.message
    assert (
        stats["exhausted_total"] == 1
        and stats["sized_by"] == "--max-connections"
        and stats["pool_timeout_s"] == 0.05
    )
    reply = error_response("openai", POOL_EXHAUSTED, error.message)
    assert (
        reply.status_code == 503
        and reply.headers["retry-after"] == "1"
        and reply.headers["x-prefixgate-error"] == "pool_exhausted"
    )
    assert b'"code":"pool_exhausted"' in reply.body


def test_without_max_connections_the_pool_is_sized_from_the_fd_limit():
    up = UpstreamPool(ProxyConfig())
    assert up.max_connections == pool_size(fd_limit()) and up.transport.max_connections == up.max_connections
    assert up.pool_stats()["sized_by"] == "fd_limit" and up.pool_stats()["fd_limit"] == fd_limit()
    assert ProxyConfig().pool_timeout == 5.0


@pytest.mark.parametrize("bad", [0, -1, 1.5, "100", True])
def test_a_bad_max_connections_is_refused_naming_the_flag(bad):
    with pytest.raises(ValueError, match="--max-connections"):
        ProxyConfig(max_connections=bad)
