"""Redis down mid-run and at start, against the real proxy and a throwaway redis-server.

Each test starts its own redis-server on a free port (never the shared one: it is killed),
kills it and starts it again on the same port. Every request must stay a 200 with the prefix
headers ``unknown``, its ledger row saying the store was ``unavailable`` or ``skipped``,
health ``degraded`` with the cause; when Redis is back, counts resume within a generous
wait (polled, no timing asserted). Under CI a missing redis-server fails.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from proxy.config import ProxyConfig
from proxy.tenant import TenantHasher
from tests.support.gateways import gateway
from tests.support.payloads import CHAT
from tests.support.redis_procs import RedisProcess
from tests.support.sdk_clients import OPENAI_KEY, oai

pytestmark = pytest.mark.e2e

BACK_WITHIN_S = 20.0  # a generous bound: the backoff is capped at 5 s


@pytest.fixture
def redis_process(tmp_path):
    server = RedisProcess(tmp_path)
    try:
        yield server
    finally:
        server.kill()


def ask(client) -> tuple[int, str, str]:
    r = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
    return (
        r.http_response.status_code,
        r.headers["x-prefixgate-prefix-segments"],
        r.headers["x-prefixgate-prefix-bytes"],
    )


def until_known(client) -> list[tuple[int, str, str]]:
    """Requests until the prefix is known again (or the generous wait ends): every answer."""
    answers, deadline = [], time.monotonic() + BACK_WITHIN_S
    while time.monotonic() < deadline:
        answers.append(ask(client))
        if answers[-1][1] != "unknown":
            break
        time.sleep(0.1)
    return answers


def ledger_rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT status, store, prefix_segments, tenant FROM requests ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


@contextlib.contextmanager
def proxy_on(state_dir, ledger: Path, url: str):
    with gateway(state_dir, store=f"{url}?key_prefix=outage:", ledger=str(ledger), store_timeout=1.0) as (
        proxy,
        _up,
        _spy,
        app,
    ):
        yield proxy, app  # a 1 s deadline: a busy 2-core machine must not make a live Redis look down


def test_redis_killed_mid_run_then_back_on_the_same_port(state_dir, tmp_path, redis_process):
    ledger = tmp_path / "ledger.sqlite"
    redis_process.start()
    with proxy_on(state_dir, ledger, redis_process.url) as (proxy, app):
        client = oai(proxy)
        before = [ask(client), ask(client)]
        redis_process.kill()
        down = [ask(client) for _ in range(6)]
        health = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
        redis_process.start()  # empty: nothing of before is remembered
        back = until_known(client)
        after = ask(client)
        healthy = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
        store = app.state.gate.store.inner
    assert before == [(200, "0", "0"), (200, "2", before[1][2])] and int(before[1][2]) > 0
    assert all(a == (200, "unknown", "unknown") for a in down)
    assert health.status_code == 503
    body = health.json()
    assert body["status"] == "degraded" and body["store_error"] and body["breaker"]["state"] == "open"
    assert body["breaker"]["backoff_s"] is not None and body["breaker"]["backoff_s"] <= 5.0
    assert all(status == 200 for status, *_ in back) and back[-1][1] == "0", (
        back
    )  # counts resume (from an empty Redis)
    assert after[:2] == (200, "2")
    assert healthy.status_code == 200 and healthy.json()["breaker"]["state"] == "closed"
    assert store.noscript >= 1  # the restarted Redis had lost the script: EVAL once, then EVALSHA again
    rows = ledger_rows(ledger)
    states = [store for _, store, _, _ in rows]
    n_back = len(back)
    assert len(rows) == 2 + 6 + n_back + 1 and all(
        status == 200 for status, *_ in rows
    )  # one row per request
    assert states[:2] == ["ok", "ok"] and states[-2:] == ["ok", "ok"]
    assert states[2] in ("unavailable", "skipped") and set(states[2:8] + states[8:-2]) <= {
        "unavailable",
        "skipped",
    }
    assert "skipped" in states[2:8]  # the breaker opened: later requests did not wait on Redis
    assert all(prefix is None for _, store, prefix, _ in rows if store != "ok")  # unknown, never 0


def test_redis_down_at_start_serves_degraded_then_recovers(state_dir, tmp_path, redis_process):
    ledger = tmp_path / "ledger.sqlite"
    with proxy_on(state_dir, ledger, redis_process.url) as (proxy, app):  # nothing listens on that port yet
        client = oai(proxy)
        down = [ask(client) for _ in range(3)]
        health = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
        redis_process.start()
        back = until_known(client)
        after = ask(client)
        healthy = httpx.get(f"{proxy}/prefixgate/health", timeout=10)
        local_tenant = app.state.gate.tenants.tenant_of_key(OPENAI_KEY.encode())
    shared = TenantHasher.for_config(
        ProxyConfig(state_dir=tmp_path / "other", store=f"{redis_process.url}?key_prefix=outage:")
    )
    assert all(a == (200, "unknown", "unknown") for a in down)
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert "tenant secret" in health.json()["store_error"]
    assert back[-1][:2] == (200, "0") and after[:2] == (200, "2"), (back, after)
    assert healthy.status_code == 200 and healthy.json()["status"] == "ok"
    assert local_tenant == shared.tenant_of_key(OPENAI_KEY.encode())  # the replicas' shared secret, adopted
    rows = ledger_rows(ledger)
    assert [store for _, store, _, _ in rows[:3]] == ["skipped"] * 3 and all(
        status == 200 for status, *_ in rows
    )
    assert [store for _, store, _, _ in rows[-2:]] == ["ok", "ok"]
    assert {tenant for _, store, _, tenant in rows if store == "ok"} == {
        local_tenant
    }  # the store saw only the shared tenant
