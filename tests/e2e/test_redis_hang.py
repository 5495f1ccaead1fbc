"""A hung Redis (SIGSTOP) against the real proxy: one deadline, then nothing, then back.

Each test starts its own redis-server on a free port (never the shared one: it is
stopped), and always resumes and ends it. Under CI a missing redis-server fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time

import httpx
import pytest

from proxy.store import RedisStore
from proxy.store.guard import DEFAULT_DEADLINE_S
from tests.support.ci import missing
from tests.support.gateways import gateway
from tests.support.payloads import CHAT, SYSTEM
from tests.support.redis_procs import redis_answers
from tests.support.sdk_clients import oai
from tests.support.servers import free_port

pytestmark = pytest.mark.e2e

A, B, C, D = (bytes([i]) * 16 for i in range(1, 5))


@pytest.fixture
def own_redis(tmp_path):
    """A throwaway redis-server: (url, process). Resumed (SIGCONT) and ended whatever happens."""
    binary = shutil.which("redis-server")
    if not binary:
        missing("redis-server")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while not redis_answers(url):
            if time.monotonic() > deadline or proc.poll() is not None:
                missing("Redis (throwaway redis-server did not start)")
            time.sleep(0.05)
        yield url, proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def test_a_redis_call_cancelled_mid_command_discards_its_connection(own_redis):
    """The store's connection pool (proxy.store.resp) closes a connection when a command is
    cancelled while it waits for the reply, so the cancelled command's late reply is never
    read as the next command's answer."""
    url, proc = own_redis

    async def scenario():
        store = RedisStore(f"{url}?key_prefix=hang:", {"openai": 60.0})
        try:
            assert await store.seen("t", "openai", [A, B]) == 0
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(DEFAULT_DEADLINE_S):
                        await store.seen("t", "openai", [C])  # its reply would be 0
                pool = store._fast
                assert pool is not None and pool.connects == 1 and pool.idle == 0  # closed, not pooled
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            return [await store.seen("t", "openai", [A, B, D]), await store.seen("t", "openai", [A, B, D])]
        finally:
            await store.aclose()

    assert asyncio.run(scenario()) == [2, 3]  # real answers, not the cancelled command's 0


def test_a_stopped_redis_costs_one_deadline_then_nothing_then_comes_back(state_dir, own_redis):
    url, proc = own_redis
    other = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "name three fruits"}]
    with gateway(state_dir, store=f"{url}?key_prefix=hang-e2e:") as (proxy, *_):
        client = oai(proxy)

        def ask(messages=CHAT) -> tuple[str, str, float]:
            started = time.perf_counter()
            r = client.chat.completions.with_raw_response.create(
                model="gpt-4o", messages=messages, max_tokens=4
            )
            took = time.perf_counter() - started
            return r.headers["x-prefixgate-prefix-segments"], r.headers["x-prefixgate-prefix-bytes"], took

        assert ask()[0] == "0"
        base = min(ask()[2] for _ in range(3))  # a warm request with a working store
        assert ask()[0] == "2"

        os.kill(proc.pid, signal.SIGSTOP)
        try:
            segments, nbytes, first = ask()
            later = [ask() for _ in range(8)]
            started = time.perf_counter()
            health = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
            health_s = time.perf_counter() - started
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        resumed = time.monotonic()
        while True:  # probes run at most once a second; the first one after SIGCONT closes it
            back = ask()
            if back[0] != "unknown" or time.monotonic() - resumed > 5:
                break
            time.sleep(0.1)
        back_s = time.monotonic() - resumed
        fresh = [ask(other)[0], ask(other)[0]]
        healthy = httpx.get(f"{proxy}/prefixgate/health", timeout=10)

    assert (segments, nbytes) == ("unknown", "unknown")
    assert first < base + DEFAULT_DEADLINE_S + 0.5, (first, base)  # one deadline, not redis-py's 2 s (or 4)
    assert all(s == b == "unknown" for s, b, _ in later)
    assert max(t for *_, t in later) < 0.5, [t for *_, t in later]  # no await on the store while open
    assert health.status_code == 503 and health_s < 0.5
    assert health.json()["status"] == "degraded" and health.json()["breaker"]["state"] == "open"
    assert back[0] == "2" and back_s < 2.5, (back, back_s)  # real numbers again, about a second after
    assert fresh == ["1", "2"]  # and no late reply of a cancelled command shifted onto a later one
    assert healthy.status_code == 200 and healthy.json()["breaker"]["state"] == "closed"
