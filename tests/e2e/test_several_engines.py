"""Several engines behind one ``[[upstream]]``, end to end with the official openai SDK: a second
proxy with the same config sends each app to the same replica (on its own, and through Redis
having seen only some of the apps), and a replica that stops mid-run costs no client error."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from proxy.bench.route_replica import FakeEngine
from proxy.bench.route_replica import create_app as create_engine
from proxy.config import ProxyConfig
from tests.support.engine_pool import app_messages, engines, pool_config, pool_proxy
from tests.support.servers import serve

pytestmark = pytest.mark.e2e
APPS = 8


def _ask(base: str, app: int, turn: int = 0):
    client = openai.OpenAI(base_url=base, api_key="sk-test", max_retries=0)
    return client.chat.completions.create(model="fake-engine", messages=app_messages(app, turn), max_tokens=2)


def _replicas(keep, since: int) -> dict[int, str]:
    """app → the replica that served it, from the records after the first ``since`` (one per app)."""
    return {i % APPS: r.replica for i, r in enumerate(keep.records[since:])}


def test_a_second_proxy_with_the_same_config_sends_each_app_to_the_same_replica(tmp_path):
    with engines(4) as (urls, _):
        one, two = pool_config(tmp_path / "one", urls), pool_config(tmp_path / "two", list(reversed(urls)))
        (tmp_path / "one").mkdir()
        (tmp_path / "two").mkdir()
        with pool_proxy(one) as (a, keep_a, _), pool_proxy(two) as (b, keep_b, _):
            for app in range(APPS):  # each proxy meets the apps in its own order
                _ask(a, app)
                _ask(b, APPS - 1 - app)
            for app in range(APPS):
                _ask(a, app, 1)
                _ask(b, app, 1)
    got_a, got_b = _replicas(keep_a, APPS), _replicas(keep_b, APPS)
    assert got_a == got_b and len(got_a) == APPS
    assert sorted(list(got_a.values()).count(u) for u in urls) == [2, 2, 2, 2]  # 8 apps, 4 replicas


def test_through_redis_a_proxy_that_saw_some_apps_places_them_as_one_that_saw_all(tmp_path, redis_url):
    url, prefix = redis_url
    store = f"{url}?key_prefix={prefix}"
    with engines(4) as (urls, _):
        configs = []
        for name in ("one", "two"):
            (tmp_path / name).mkdir()
            base = pool_config(tmp_path / name, urls)
            configs.append(
                ProxyConfig(
                    upstreams=base.upstreams, state_dir=base.state_dir, ledger=base.ledger, store=store
                )
            )
        with pool_proxy(configs[0]) as (a, keep_a, _), pool_proxy(configs[1]) as (b, keep_b, app_b):
            for app in range(APPS):
                _ask(a, app)
            for app in range(0, APPS, 2):
                _ask(b, app)  # B meets half the apps; the others' heads reach it through Redis
            deadline = time.monotonic() + 10
            while len(app_b.state.gate.replicas.get("engines").heads) < APPS and time.monotonic() < deadline:
                time.sleep(0.1)
            for app in range(APPS):
                _ask(a, app, 1)
                _ask(b, app, 1)
    assert _replicas(keep_a, APPS) == _replicas(keep_b, APPS // 2)


def test_a_replica_that_stops_mid_run_costs_no_client_error(tmp_path):
    fakes = [FakeEngine(60_000, base_ms=1, per_token_us=1, decode_ms=2) for _ in range(3)]
    with contextlib.ExitStack() as stack:
        stoppers = [contextlib.ExitStack() for _ in fakes]
        urls = [s.enter_context(serve(create_engine(f))) + "/v1" for s, f in zip(stoppers, fakes)]
        for s in stoppers:
            stack.enter_context(s)
        config = pool_config(tmp_path, urls, health_interval=0.2)
        base, keep, app = stack.enter_context(pool_proxy(config))
        jobs = [(a, turn) for turn in range(6) for a in range(APPS)]
        errors: list[BaseException] = []

        def send(job):
            if job == jobs[len(jobs) // 2]:
                stoppers[0].close()  # the first engine stops (uvicorn drains, then exits)
            try:
                _ask(base, *job)
            except openai.APIError as exc:
                errors.append(exc)

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(send, jobs))
        snapshot = app.state.gate.replicas.snapshot()["engines"]
    assert errors == [] and len(keep.records) == len(jobs)
    assert all(r.status == 200 for r in keep.records)
    first = snapshot["replicas"][0]
    assert first["health"]["state"] != "up"
    later = keep.records[-APPS:]
    assert all(r.replica != urls[0] for r in later)  # its apps moved to the others
