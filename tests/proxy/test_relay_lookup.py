"""proxy.relay: the prefix look-up in flight on the relay's other ways out — a shutdown cut
(unit: the relay alone, a fake upstream and gate) and the Gemini auto-cache's resend (through
the app, a mocked Gemini)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import httpx
import pytest

from analyzer.prefix import chain
from analyzer.segments import Segment
from proxy.accounting.records import RequestRecord
from proxy.exchange import Exchange, Lookup
from proxy.relay import Relay
from proxy.server.aborts import ShutdownCut
from proxy.store.guard import GuardedStore
from tests.proxy.test_handler_lookup import UpstreamFirst
from tests.proxy.test_relay_resend import GEN, KEY, REFUSED, body
from tests.proxy.test_relay_resend import proxy as proxy  # noqa: F401  (the fixture)


class HangingUpstream:
    def __init__(self):
        self.sent = asyncio.Event()

    async def send(self, method, url, headers, content):
        self.sent.set()
        await asyncio.Event().wait()  # never answers


def test_a_shutdown_cut_cancels_the_lookup_and_the_record_keeps_it_unknown():
    async def scenario():
        store = UpstreamFirst()  # never released: would wait for its deadline
        record = RequestRecord("r1", 0.0, "t", "openai", "/v1/chat/completions")
        headers = {"x-prefixgate-request-id": "r1", "x-prefixgate-prefix-segments": "0", "x-prefixgate-prefix-bytes": "0"}
        exchange = Exchange(record, 0.0, headers, SimpleNamespace(url=httpx.URL("http://up.test/v1/chat/completions")),
                            upstream_headers=[], upstream_body=b"{}")
        exchange.lookup = Lookup(record, headers, chain([Segment("system", "system", b"x" * 100)]))
        exchange.lookup.start(GuardedStore(store, deadline_s=30))
        lookup_task = exchange.lookup.task
        upstream, finished, sent = HangingUpstream(), [], []
        gate = SimpleNamespace(upstream=upstream, finish=finished.append, gemini_cache=None)

        async def receive():
            await asyncio.Event().wait()  # the client stays

        async def send(message):
            sent.append(message)

        relay = asyncio.get_running_loop().create_task(Relay(exchange, gate)({"type": "http"}, receive, send))
        await upstream.sent.wait()
        relay.cancel()  # the server's shutdown timeout ran out
        with pytest.raises(ShutdownCut):
            await relay
        await asyncio.wait([lookup_task])
        return store, record, finished, sent, lookup_task

    store, record, finished, sent, lookup_task = asyncio.run(scenario())
    assert lookup_task.cancelled() and store.steps == ["look-up asked", "look-up cancelled"]
    assert len(finished) == 1 and (record.status, record.error) == (503, "shutdown_cut")
    assert (record.store, record.prefix_segments, record.prefix_bytes) == ("cancelled", None, None)
    head = dict(sent[0]["headers"])
    assert sent[0]["status"] == 503 and head[b"x-prefixgate-prefix-segments"] == b"unknown"


def test_a_resent_gemini_request_gets_the_lookups_answer(proxy):  # noqa: F811
    client, gemini, keep = proxy
    store = UpstreamFirst(answer=1)
    client.app.state.gate.store = GuardedStore(store, deadline_s=5)
    gemini.refusal = httpx.Response(403, headers={"content-type": "application/json"}, content=REFUSED)
    store.asked.set()  # answers at its first step (still a task beside the upstream call: no seen_sync)
    answer = client.post(GEN, json=body("q"), headers=KEY)
    assert answer.status_code == 200 and answer.headers["x-prefixgate-gemini-cache"] == "resent"
    record = keep.records[-1]
    assert answer.headers["x-prefixgate-prefix-segments"] == "1" == str(record.prefix_segments)
    assert (record.store, record.status, record.rewrites[-1]) == ("ok", 200, "gemini-cached-content-resent")
