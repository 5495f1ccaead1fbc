"""The auto-cache's background calls (proxy.gemini_cache.background) inside the app, against a mocked
Gemini upstream: each is its own record with its status, however it ends (a failed create, one
cut at shutdown); an entry's expiry counts from before its create was sent; a huge or compressed
answer is read only up to its bound."""

from __future__ import annotations

import asyncio

import httpx

from tests.support.cached_contents_upstream import GEN, KEY, Upstream, app_for, background, body, settle
from tests.support.sinks import Keep


def test_a_failed_create_is_recorded_with_its_status(state_dir):
    keep = Keep()
    with app_for(
        state_dir, Upstream(create_status=500), gemini_auto_cache=True, gemini_auto_cache_after=1
    ) as client:
        client.app.state.gate.recorder.add_sink(keep)
        client.post(GEN, json=body("q0"), headers={"x-goog-api-key": KEY})
        settle(client.app.state.gate.gemini_auto_cache.manager)
    (create,) = background(keep.records, "create")
    assert (create.status, create.error, create.cache_storage_usd, create.method) == (500, None, None, "POST")


def test_a_create_the_upstream_never_answers_is_recorded_at_shutdown(state_dir, monkeypatch):
    from proxy.gemini_cache import background as background_calls

    # the wait before cutting; its bound, not a speed check
    monkeypatch.setattr(background_calls, "CLOSE_WAIT_S", 0.05)
    keep = Keep()

    async def slow(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cachedContents"):
            await asyncio.sleep(3600)  # cut by the shutdown
        return Upstream()(request)

    with app_for(state_dir, slow, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        client.app.state.gate.recorder.add_sink(keep)
        assert (
            client.post(GEN, json=body("q0"), headers={"x-goog-api-key": KEY}).headers[
                "x-prefixgate-gemini-cache"
            ]
            == "creating"
        )
    (create,) = background(keep.records, "create")
    assert (create.status, create.error, create.cache_storage_usd) == (503, "shutdown_cut", None)


def test_expiry_counts_from_before_the_create_was_sent(state_dir):
    """Google's ttl runs from its create: a slow answer must not stretch the proxy's idea of it."""
    clock = {"t": 1000.0}
    upstream = Upstream()

    def slow(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cachedContents"):
            clock["t"] += 30  # the create took 30 s
        return upstream(request)

    with app_for(state_dir, slow, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        manager.tracker.clock = lambda: clock["t"]
        client.post(GEN, json=body("q0"), headers={"x-goog-api-key": KEY})
        settle(manager)
        (entry,) = manager.tracker.entries.values()
    assert entry.state == "ready" and entry.expires_at <= 1000.0 + entry.ttl_s


class Huge(httpx.AsyncByteStream):
    """A create answer far past any cachedContents resource; counts what was pulled from it."""

    def __init__(self):
        self.pulled = 0

    async def __aiter__(self):
        for _ in range(64):
            self.pulled += 1 << 20
            yield b" " * (1 << 20)


def test_a_huge_or_compressed_create_answer_is_read_bounded(state_dir):
    import gzip

    huge = Huge()
    bomb = gzip.compress(
        b"{" + b" " * (8 << 20), compresslevel=1
    )  # 8 MiB of JSON-looking spaces, some KiB compressed
    answers = iter(
        [
            httpx.Response(500, stream=huge),
            httpx.Response(200, headers={"content-encoding": "gzip"}, content=bomb),
        ]
    )
    keep = Keep()

    def upstream(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cachedContents"):
            return next(answers)
        return Upstream()(request)

    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        client.app.state.gate.recorder.add_sink(keep)
        manager = client.app.state.gate.gemini_auto_cache.manager
        client.post(GEN, json=body("q0"), headers={"x-goog-api-key": KEY})
        settle(manager)
        (entry,) = manager.tracker.entries.values()
        entry.retry_at = 0  # past its backoff: the next request creates again
        manager.tracker.held.clear()
        client.post(GEN, json=body("q1"), headers={"x-goog-api-key": KEY})
        settle(manager)
    assert huge.pulled <= 2 << 20  # stopped near the bound, not at 64 MiB
    first, second = background(keep.records, "create")
    assert (first.status, second.status, second.error) == (500, 200, "cache_bad_answer")
