"""proxy.relay: the prefix look-up in flight on the relay's other ways out — a shutdown cut and a
client leaving during a resend (unit: the relay alone, a fake upstream and gate) — and the Gemini
auto-cache's resend (through the app, a mocked Gemini; and alone: the refused answer is closed
before the resend goes out)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import httpx
import pytest

from analyzer.prefix import chain
from analyzer.segments import Segment
from proxy.accounting.records import RequestRecord
from proxy.exchange import Exchange
from proxy.gemini_cache.hook import AutoCacheHook
from proxy.relay import Relay
from proxy.server.aborts import ShutdownCut
from proxy.store.guard import GuardedStore
from proxy.store.lookup import Lookup
from tests.support.gemini_auto_cache import GEN, KEY, REFUSED, auto_cached_proxy, body
from tests.support.stores import UpstreamFirst


@pytest.fixture
def proxy(state_dir):
    with auto_cached_proxy(state_dir) as proxy:
        yield proxy


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
        headers = {
            "x-prefixgate-request-id": "r1",
            "x-prefixgate-prefix-segments": "0",
            "x-prefixgate-prefix-bytes": "0",
        }
        exchange = Exchange(
            record,
            0.0,
            headers,
            SimpleNamespace(url=httpx.URL("http://up.test/v1/chat/completions")),
            upstream_headers=[],
            upstream_body=b"{}",
        )
        exchange.lookup = Lookup(record, headers, chain([Segment("system", "system", b"x" * 100)]))
        exchange.lookup.start(GuardedStore(store, deadline_s=30))
        lookup_task = exchange.lookup.task
        upstream, finished, sent = HangingUpstream(), [], []
        gate = SimpleNamespace(pool=upstream, finish=finished.append, gemini_auto_cache=AutoCacheHook())

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


def test_a_resent_gemini_request_gets_the_lookups_answer(proxy):
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


class Body(httpx.AsyncByteStream):
    """An upstream body in pieces that counts its ``aclose`` (the connection's hand-back)."""

    def __init__(self, chunks: list[bytes]):
        self.chunks, self.closed = chunks, 0

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk

    async def aclose(self):
        self.closed += 1


class Answers:
    """Answers each send with the next response; ``None``: hangs (the client may leave)."""

    def __init__(self, *responses: httpx.Response | None):
        self.responses, self.bodies, self.sent = list(responses), [], asyncio.Event()
        self.first_closed_at_resend: int | None = None

    async def send(self, method, url, headers, content):
        self.bodies.append(content)
        if len(self.bodies) == 2:
            self.first_closed_at_resend = self.first_body.closed
            self.sent.set()
        response = self.responses.pop(0)
        if response is None:
            await asyncio.Event().wait()
        return response


def _rewritten_exchange(store):
    record = RequestRecord("r1", 0.0, "t", "gemini", "/v1beta/models/m:generateContent", method="POST")
    headers = {
        "x-prefixgate-request-id": "r1",
        "x-prefixgate-prefix-segments": "0",
        "x-prefixgate-prefix-bytes": "0",
    }
    target = SimpleNamespace(
        url=httpx.URL("http://up.test/v1beta/models/m:generateContent"),
        endpoint=SimpleNamespace(usage="gemini", billable=True),
    )
    exchange = Exchange(
        record,
        0.0,
        headers,
        target,
        upstream_headers=[],
        upstream_body=b"rewritten",
        fallback_body=b"original",
    )
    exchange.lookup = Lookup(record, headers, chain([Segment("system", "system", b"x" * 100)]))
    exchange.lookup.start(GuardedStore(store, deadline_s=30))
    return exchange, record


def _refusal(size: int) -> tuple[httpx.Response, Body]:
    error = b'{"error":{"code":403,"message":"CachedContent not found"' + b" " * size + b"}}"
    body = Body([error[i : i + 30_000] for i in range(0, len(error), 30_000)])
    return httpx.Response(403, headers={"content-type": "application/json"}, stream=body), body


def test_a_refusal_longer_than_the_read_ahead_is_closed_before_the_resend_and_counted_once():
    async def scenario():
        store = UpstreamFirst(answer=1)
        store.asked.set()
        exchange, record = _rewritten_exchange(store)
        refusal, first = _refusal(100_000)  # over MAX_ERROR_BODY: read in part, then closed (never reused)
        second = Body([b'{"ok":1}'])
        upstream = Answers(
            refusal,
            httpx.Response(
                200, headers={"content-type": "application/json", "content-length": "8"}, stream=second
            ),
        )
        upstream.first_body = first
        finished, sent, refused = [], [], []
        gate = SimpleNamespace(
            pool=upstream,
            finish=finished.append,
            gemini_auto_cache=AutoCacheHook(SimpleNamespace(refused=refused.append)),
        )

        async def receive():
            await asyncio.Event().wait()

        async def send(message):
            sent.append(message)

        await Relay(exchange, gate)({"type": "http"}, receive, send)
        return record, finished, sent, refused, upstream, first, second

    record, finished, sent, refused, upstream, first, second = asyncio.run(scenario())
    assert (
        upstream.bodies == [b"rewritten", b"original"]
        and upstream.first_closed_at_resend == 1
        and refused == ["r1"]
    )
    assert (first.closed, second.closed, len(finished)) == (1, 1, 1)
    head = dict(sent[0]["headers"])
    assert (
        sent[0]["status"] == 200
        and head[b"content-length"] == b"8"
        and head[b"x-prefixgate-gemini-cache"] == b"resent"
    )
    assert (
        head[b"x-prefixgate-prefix-segments"] == b"1" and b"".join(m["body"] for m in sent[1:]) == b'{"ok":1}'
    )
    assert (record.status, record.store, record.rewrites) == (200, "ok", ["gemini-cached-content-resent"])


def test_a_client_leaving_during_the_resend_is_one_499_record_and_its_lookup_cancelled():
    async def scenario():
        store = UpstreamFirst()  # never released: still in flight when the client leaves
        exchange, record = _rewritten_exchange(store)
        lookup_task = exchange.lookup.task
        refusal, first = _refusal(0)
        upstream = Answers(refusal, None)  # the resend hangs
        upstream.first_body = first
        finished, sent = [], []
        gate = SimpleNamespace(
            pool=upstream,
            finish=finished.append,
            gemini_auto_cache=AutoCacheHook(SimpleNamespace(refused=lambda request_id: None)),
        )

        async def receive():
            await upstream.sent.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        await Relay(exchange, gate)({"type": "http"}, receive, send)
        await asyncio.wait([lookup_task])
        return record, finished, sent, first, lookup_task

    record, finished, sent, first, lookup_task = asyncio.run(scenario())
    assert sent == [] and first.closed == 1 and len(finished) == 1 and lookup_task.cancelled()
    assert (record.status, record.error, record.store, record.prefix_segments) == (
        499,
        "client_disconnected",
        "cancelled",
        None,
    )
