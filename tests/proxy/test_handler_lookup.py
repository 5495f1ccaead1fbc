"""proxy.handler + proxy.store.lookup.Lookup: the prefix store's look-up runs beside the upstream
call, not before it, and every way out leaves one record with its store outcome and no task.

A store whose ``seen`` answers only once the (mocked, in-loop) upstream has the request proves
the overlap by order, not by time: before the change the look-up ran first, so it would wait
for an upstream that had not been asked, until the guard's deadline made the prefix unknown.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time

import httpx
import pytest
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.store.base import PrefixStore
from proxy.store.guard import GuardedStore
from proxy.store.lookup import LOOKUP_TASK
from tests.support.servers import serve
from tests.support.sinks import Keep
from tests.support.stores import UpstreamFirst

USAGE = {"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1536}}
CHAT = {
    "model": "gpt-4o",
    "messages": [{"role": "system", "content": "You are terse. " * 50}, {"role": "user", "content": "hi"}],
}
DEADLINE_S = 5.0  # generous: reached only if the look-up waited for an upstream never asked


def app_with(state_dir, upstream, **config) -> tuple[TestClient, Keep]:
    cfg = ProxyConfig(
        openai_base="http://openai.test/v1",
        anthropic_base="http://anthropic.test",
        state_dir=state_dir,
        **config,
    )
    client = TestClient(create_app(cfg, transport=httpx.MockTransport(upstream)))
    return client, Keep()


def start(app, keep: Keep, store) -> None:
    app.state.gate.store = store
    app.state.gate.recorder.add_sink(keep)


def wait_records(keep: Keep, n: int) -> list:
    deadline = time.monotonic() + 5  # sinks run off the request path: a bound, not a speed check
    while len(keep.records) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return keep.records


def test_the_lookup_overlaps_the_upstream_call(state_dir):
    store = UpstreamFirst(answer=1)

    async def upstream(request: httpx.Request) -> httpx.Response:
        store.steps.append("upstream asked")
        store.asked.set()  # only now may the look-up answer
        return httpx.Response(200, json={"usage": USAGE})

    client, keep = app_with(state_dir, upstream)
    with client:
        start(client.app, keep, GuardedStore(store, deadline_s=DEADLINE_S))
        r = client.post("/v1/chat/completions", json=CHAT)
        records = wait_records(keep, 1)
    assert r.status_code == 200
    assert (r.headers["x-prefixgate-prefix-segments"], r.headers["x-prefixgate-prefix-bytes"]) == (
        "1",
        str(records[0].prefix_bytes),
    )
    assert sorted(store.steps) == ["look-up answered", "look-up asked", "upstream asked"]
    assert store.steps.index("upstream asked") < store.steps.index(
        "look-up answered"
    )  # sent upstream before the answer
    assert (records[0].store, records[0].prefix_segments) == ("ok", 1) and records[0].prefix_bytes > 0


def test_an_upstream_error_waits_for_the_lookup_and_keeps_its_answer(state_dir):
    store = UpstreamFirst(answer=1)

    async def upstream(request: httpx.Request) -> httpx.Response:
        store.asked.set()
        raise httpx.ConnectError("refused")

    client, keep = app_with(state_dir, upstream)
    with client:
        start(client.app, keep, GuardedStore(store, deadline_s=DEADLINE_S))
        r = client.post("/v1/chat/completions", json=CHAT)
        records = wait_records(keep, 1)
    assert r.status_code == 502 and r.headers["x-prefixgate-prefix-segments"] == "1"
    assert (records[0].status, records[0].store, records[0].prefix_segments) == (502, "ok", 1)


def test_a_body_over_the_limit_starts_no_lookup(state_dir):
    store = UpstreamFirst()
    client, keep = app_with(state_dir, lambda request: httpx.Response(200, json={}), max_body=256)
    with client:
        start(client.app, keep, GuardedStore(store, deadline_s=DEADLINE_S))
        r = client.post("/v1/chat/completions", json=CHAT)
        records = wait_records(keep, 1)
    assert r.status_code == 413 and r.headers["x-prefixgate-prefix-segments"] == "0"
    assert (records[0].store, records[0].prefix_segments) == ("none", 0) and store.steps == []


def test_a_burst_of_failing_requests_leaves_no_lookup_task_and_no_unretrieved_exception(state_dir, caplog):
    """Half the look-ups raise (a raw store, no guard: the exception reaches the look-up's
    task), every upstream call fails; afterwards no look-up task is left on the loop and
    asyncio never logs "Task exception was never retrieved"."""
    stores = [UpstreamFirst(answer=2, fail=i % 2 == 1) for i in range(2)]

    class Alternating(PrefixStore):
        def __init__(self):
            self.n = 0

        def ready(self, tenant=None):
            return True

        async def seen(self, tenant, provider, hashes):
            self.n += 1
            store = stores[self.n % 2]
            store.asked.set()
            return await store.seen(tenant, provider, hashes)

        async def aclose(self):
            return None

    def upstream(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    caplog.set_level(logging.ERROR, logger="asyncio")
    client, keep = app_with(state_dir, upstream)
    with client:
        start(client.app, keep, Alternating())
        statuses = [client.post("/v1/chat/completions", json=CHAT).status_code for _ in range(30)]
        records = wait_records(keep, 30)

        async def leftovers() -> list[str]:
            for _ in range(100):  # let cancelled tasks finish their last step
                await asyncio.sleep(0)
            gc.collect()  # an unretrieved exception is logged when its task is collected
            return [t.get_name() for t in asyncio.all_tasks() if t.get_name() == LOOKUP_TASK]

        left = client.portal.call(leftovers)
    assert statuses == [502] * 30
    assert left == []
    assert sorted({(r.status, r.store, r.prefix_segments) for r in records}) == [
        (502, "ok", 2),
        (502, "unavailable", None),
    ]
    assert [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()] == []


@pytest.mark.parametrize("answers", [True, False], ids=["upstream-answered", "upstream-thinking"])
def test_a_client_leaving_cancels_the_lookup_and_the_record_says_unknown(state_dir, answers):
    """Real uvicorn and a real client that gives up: while the proxy awaits the look-up
    (the upstream answered) or the upstream (still thinking), the look-up is cancelled."""
    store = UpstreamFirst()
    store_done = threading.Event()
    upstream_hold = asyncio.Event()

    class Noting(UpstreamFirst):
        async def seen(self, tenant, provider, hashes):
            try:
                return await store.seen(tenant, provider, hashes)  # never released: waits for its deadline
            finally:
                store_done.set()

    async def upstream(request: httpx.Request) -> httpx.Response:
        if not answers:
            await upstream_hold.wait()  # never set: the upstream keeps thinking
        return httpx.Response(200, json={"usage": USAGE})

    keep = Keep()
    cfg = ProxyConfig(
        openai_base="http://openai.test/v1", anthropic_base="http://anthropic.test", state_dir=state_dir
    )
    app = create_app(cfg, transport=httpx.MockTransport(upstream))
    with serve(app) as url:
        start(app, keep, GuardedStore(Noting(), deadline_s=DEADLINE_S))
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url}/v1/chat/completions", json=CHAT, timeout=httpx.Timeout(5, read=0.3))
        assert store_done.wait(DEADLINE_S - 1), "the look-up outlived its client"
        records = wait_records(keep, 1)
    assert "look-up cancelled" in store.steps
    assert (records[0].status, records[0].store, records[0].prefix_segments, records[0].prefix_bytes) == (
        499,
        "cancelled",
        None,
        None,
    )
