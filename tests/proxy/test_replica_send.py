"""A pool's replica picked at send time, through the proxy, with the official openai SDK and real
loopback engines: one per app, a connect failure retried once on the next replica, a replica that
answers garbage never sent the request twice and leaves the rotation, all down a fast 502."""

from __future__ import annotations

import sqlite3
import time

import httpx
import openai
import pytest

from proxy.replica_send import replica_url
from tests.support.engine_pool import app_messages, engines, pool_config, pool_proxy
from tests.support.rawserver import RawServer, Reply
from tests.support.servers import free_port


def _ask(base: str, app: int, turn: int = 0):
    client = openai.OpenAI(base_url=base, api_key="sk-test", max_retries=0)
    return client.chat.completions.with_raw_response.create(
        model="fake-engine", messages=app_messages(app, turn), max_tokens=2
    )


def test_each_app_stays_on_one_replica_and_reads_its_cache(tmp_path):
    with (
        engines(3) as (urls, fakes),
        pool_proxy(pool_config(tmp_path, urls, health_interval=0)) as (
            base,
            keep,
            app,
        ),
    ):
        for turn in range(3):
            for a in range(6):
                assert _ask(base, a, turn).http_response.status_code == 200
        snapshot = app.state.gate.replicas.snapshot
        root = base.removesuffix("/engines/v1")
        stats = httpx.get(f"{root}/prefixgate/stats").json()["replicas"]["engines"]
        metrics = httpx.get(f"{root}/prefixgate/metrics").text
        health = httpx.get(f"{root}/prefixgate/health").json()
    assert sum(r["requests"] for r in stats["replicas"]) == 18 and stats["routing"] == "prefix"
    assert all(
        f'prefixgate_replica_requests_total{{replica="{u}",upstream="engines"}}' in metrics for u in urls
    )
    assert health["replicas"] == {"engines": {"in_rotation": 3, "replicas": 3}} and health["status"] == "ok"
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        rows = db.execute("SELECT replica, COUNT(*) FROM requests GROUP BY replica").fetchall()
    assert dict(rows) == {u: sum(r.replica == u for r in keep.records) for u in urls}  # every row names it
    # once every app was seen (the first turn placed them as they came), each stays on one replica
    by_app: dict[int, set[str]] = {}
    for i, r in enumerate(keep.records[6:]):
        by_app.setdefault(i % 6, set()).add(r.replica)
    assert all(len(replicas) == 1 for replicas in by_app.values())
    assert sorted(sum(r in v for v in by_app.values()) for r in urls) == [2, 2, 2]  # 6 apps, 3 replicas
    assert sum(f.requests for f in fakes) == 18
    assert all(r.usage.cached_tokens > 1000 for r in keep.records[12:])  # the last turn read its head
    stats = snapshot()["engines"]
    assert stats["heads"] == 6 and sum(r["requests"] for r in stats["replicas"]) == 18
    assert sum(r["cached_tokens"] for r in stats["replicas"]) == sum(
        r.usage.cached_tokens for r in keep.records
    )


def test_a_replica_that_refuses_connections_is_skipped_once_and_leaves_the_rotation(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with (
        engines(1) as ([alive], fakes),
        pool_proxy(pool_config(tmp_path, [dead, alive], routing="round-robin", health_interval=0)) as (
            base,
            keep,
            app,
        ),
    ):
        for a in range(6):
            assert _ask(base, a).http_response.status_code == 200
        pool = app.state.gate.replicas.get("engines")
        down = next(r for r in pool.replicas if r.url == dead)
        assert down.health.state != "up" and down.stats.retried_away == 3  # out after 3 failures
        assert {r.replica for r in keep.records} == {alive}
        assert [r.attempts for r in keep.records] == [2, 2, 2, 1, 1, 1]  # round robin tries it first
    assert fakes[0].requests == 6


def test_a_replica_answering_garbage_fails_that_request_and_never_gets_it_twice(tmp_path):
    junk = RawServer(lambda req: Reply([(b"NOT HTTP AT ALL\r\n\r\n", 0.0)], close=True))
    with (
        junk,
        engines(1) as ([alive], fakes),
        pool_proxy(
            pool_config(tmp_path, [junk.url + "/v1", alive], routing="round-robin", health_interval=0)
        ) as (base, keep, app),
    ):
        statuses = []
        for a in range(8):
            try:
                statuses.append(_ask(base, a).http_response.status_code)
            except openai.APIStatusError as exc:
                statuses.append(exc.status_code)
                assert exc.response.headers["x-prefixgate-error"] == "upstream_protocol_error"
        pool = app.state.gate.replicas.get("engines")
        bad = next(r for r in pool.replicas if r.url == junk.url + "/v1")
    # round robin: the junk replica got every other request until 3 failures took it out
    assert statuses[:6] == [502, 200, 502, 200, 502, 200] and statuses[6:] == [200, 200]
    assert bad.health.state != "up" and bad.stats.errors == 3 and bad.stats.retried_away == 0
    assert fakes[0].requests == 5  # the failed ones were never sent again to the good replica
    assert [r.error for r in keep.records].count("upstream_protocol_error") == 3


def test_every_replica_down_is_a_fast_502_in_the_providers_shape(tmp_path):
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    with pool_proxy(pool_config(tmp_path, urls, health_interval=0)) as (base, keep, app):
        for _ in range(3):  # 2 sends each: out after 3 failures in a row per replica
            with pytest.raises(openai.APIStatusError):
                _ask(base, 0)
        began = time.perf_counter()
        response = httpx.post(
            f"{base}/chat/completions",
            json={"model": "m", "messages": app_messages(1)},
            headers={"authorization": "Bearer sk-test"},
        )
        took = time.perf_counter() - began
    assert response.status_code == 502 and took < 0.5
    assert response.headers["x-prefixgate-error"] == "no_healthy_replica"
    assert response.json()["error"]["code"] == "no_healthy_replica"
    assert keep.records[-1].error == "no_healthy_replica"


def test_the_replica_url_keeps_the_routers_path_and_query():
    url = httpx.URL("http://first:8000/v1/chat/completions?x=1")
    assert str(replica_url("http://second:9000/v1", url)) == "http://second:9000/v1/chat/completions?x=1"
