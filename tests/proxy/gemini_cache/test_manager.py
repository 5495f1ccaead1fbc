"""The auto-cache manager inside the app, against a mocked Gemini upstream (httpx.MockTransport):
what it sends (the client's key in a header, never in a URL; only the configured host),
that a failed create backs off, that a refused cache is resent as sent and dropped, that a
refresh is a PATCH with the storage it bought (the calls' own ends: test_background.py)."""

from __future__ import annotations

import orjson
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig, UpstreamSpec
from tests.support.cached_contents_upstream import (
    GEN,
    KEY,
    SYSTEM,
    Upstream,
    app_for,
    background,
    body,
    settle,
)
from tests.support.sinks import Keep


def test_off_by_default_and_only_for_gemini_upstreams(state_dir):
    with app_for(state_dir, Upstream()) as client:
        assert client.app.state.gate.gemini_auto_cache.manager is None
    with pytest.raises(ValueError, match="only gemini"):
        UpstreamSpec("ds", "openai", "http://ds.test/v1", auto_cache=True)
    with pytest.raises(ValueError, match="gemini-auto-cache-after"):
        ProxyConfig(gemini_auto_cache=True, gemini_auto_cache_after=0, state_dir=state_dir)
    named = ProxyConfig(
        state_dir=state_dir,
        ledger=":memory:",
        upstreams=(UpstreamSpec("vertex", "gemini", "http://v.test", auto_cache=True),),
    )
    assert create_app(named).state.gate.gemini_auto_cache.manager.upstreams == {"vertex"}


def test_query_key_goes_in_a_header_and_a_failed_create_backs_off(state_dir):
    upstream = Upstream(create_status=500)
    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=2) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        answers = []
        for i in range(6):
            answers.append(client.post(f"{GEN}?key={KEY}", json=body(f"q{i}")))
            settle(manager)
    assert [a.headers["x-prefixgate-gemini-cache"] for a in answers] == [
        "none",
        "creating",
        "none",
        "none",
        "none",
        "none",
    ]
    (create,) = upstream.calls("/cachedContents")  # one create, then backing off: no storm
    assert (
        create.url.host == "gemini.test"
        and create.url.path == "/v1beta/cachedContents"
        and KEY not in str(create.url)
    )
    assert create.headers["x-goog-api-key"] == KEY
    sent = orjson.loads(create.content)
    assert (
        sent["model"] == "models/gemini-2.5-flash"
        and sent["systemInstruction"] == SYSTEM
        and "contents" not in sent
        and sent["ttl"] == "300s"
    )
    assert manager.counts["create_failed"] == 1


def test_refused_cache_is_resent_and_dropped_and_refresh_is_a_patch(state_dir):
    upstream = Upstream(refuse_cached=False)
    headers = {"x-goog-api-key": KEY}
    keep = Keep()
    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        client.app.state.gate.recorder.add_sink(keep)
        manager = client.app.state.gate.gemini_auto_cache.manager
        first = client.post(GEN, json=body("q0"), headers=headers)
        settle(manager)
        hit = client.post(GEN, json=body("q1"), headers=headers)
        entry = next(iter(manager.tracker.entries.values()))
        entry.expires_at = manager.tracker.clock() + 100  # under half its ttl left: the next use refreshes it
        refreshing = client.post(GEN, json=body("q2"), headers=headers)
        settle(manager)
        upstream.refuse_cached = True
        refused = client.post(GEN, json=body("q3"), headers=headers)
        after = client.post(GEN, json=body("q4"), headers=headers)
    assert first.headers["x-prefixgate-gemini-cache"] == "creating"
    assert (
        hit.headers["x-prefixgate-gemini-cache"] == refreshing.headers["x-prefixgate-gemini-cache"] == "hit"
    )
    forwarded = [orjson.loads(r.content) for r in upstream.seen if r.url.path == GEN]
    assert forwarded[1] == {"cachedContent": "cachedContents/c1", "contents": body("q1")["contents"]}
    (patch,) = upstream.calls("PATCH")
    assert (
        patch.url.path == "/v1beta/cachedContents/c1"
        and orjson.loads(patch.content) == {"ttl": "300s"}
        and patch.headers["x-goog-api-key"] == KEY
    )
    # the refused request: sent rewritten, refused (404 naming the cache), resent as the client sent it; the client sees 200
    assert refused.status_code == 200 and refused.headers["x-prefixgate-gemini-cache"] == "resent"
    assert refused.headers["x-prefixgate-rewrites"] == "gemini-cached-content,gemini-cached-content-resent"
    assert (
        "cachedContent" in forwarded[3]
        and forwarded[4] == body("q3")
        and manager.counts["dropped"] == manager.counts["resent"] == 1
    )
    assert (
        after.headers["x-prefixgate-gemini-cache"] != "hit"
        and forwarded[5] == body("q4")
        and len(forwarded) == 6
    )
    clients = [r for r in keep.records if "-" not in r.request_id]
    assert [r.status for r in clients] == [200] * 5 and all(r.cache_storage_usd is None for r in clients)
    assert clients[3].rewrites == ["gemini-cached-content", "gemini-cached-content-resent"]
    # each background call is its own record, with the storage it bought (2.5 Flash: $1 per 1M tokens per hour)
    (create, again), (refresh,) = background(keep.records, "create"), background(keep.records, "refresh")
    assert (
        create.request_id == clients[0].request_id + "-create"
        and refresh.request_id == clients[2].request_id + "-refresh"
    )
    assert (
        again.request_id == clients[4].request_id + "-create"
    )  # after the drop, the prefix is cached again (after=1)
    for record, method in ((create, "POST"), (again, "POST"), (refresh, "PATCH")):
        assert (record.route, record.method, record.status, record.error, record.usage) == (
            "/v1beta/cachedContents",
            method,
            200,
            None,
            None,
        )
        assert (record.provider, record.upstream, record.model, record.tenant) == (
            "gemini",
            "gemini",
            "gemini-2.5-flash",
            clients[0].tenant,
        )
        assert (
            record.latency_s > 0
            and record.cost_usd is None
            and record.analysed
            and record.prefix_segments == 0
        )
    assert create.cache_storage_usd == pytest.approx(2600 / 1e6 * 300 / 3600)  # the 300 s ttl bought
    assert refresh.cache_storage_usd == pytest.approx(
        2600 / 1e6 * 200 / 3600, rel=1e-3
    )  # 100 s were left: 200 s more
    assert len(keep.records) == 8


def test_config_file_auto_cache_per_upstream():
    from proxy.config_file import ConfigFileError, parse

    (spec,) = parse(
        '[[upstream]]\nname = "vertex"\nprotocol = "gemini"\nbase_url = "http://v.test"\nauto_cache = true\n',
        "up.toml",
    )
    assert spec.auto_cache is True
    with pytest.raises(ConfigFileError, match=r"^up.toml:5: auto_cache must be true or false"):
        parse(
            '[[upstream]]\nname = "vertex"\nprotocol = "gemini"\nbase_url = "http://v.test"\nauto_cache = "yes"\n',
            "up.toml",
        )
    with pytest.raises(ConfigFileError, match=r"^up.toml:5: .*only gemini upstreams"):
        parse(
            '[[upstream]]\nname = "ds"\nprotocol = "openai"\nbase_url = "http://d.test/v1"\nauto_cache = true\n',
            "up.toml",
        )


def test_a_cache_never_crosses_upstreams(state_dir):
    from proxy.config import UpstreamSpec

    upstream = Upstream()
    headers = {"x-goog-api-key": KEY}
    spec = UpstreamSpec("vertex", "gemini", "http://v.test")
    with app_for(
        state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1, upstreams=(spec,)
    ) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        assert (
            client.post(GEN, json=body("q0"), headers=headers).headers["x-prefixgate-gemini-cache"]
            == "creating"
        )
        settle(manager)
        other = client.post(
            "/vertex" + GEN, json=body("q1"), headers=headers
        )  # same key and prefix, another upstream
        settle(manager)
    assert other.headers["x-prefixgate-gemini-cache"] == "creating"  # its own cache, never gemini.test's name
    sent = [r for r in upstream.seen if r.url.host == "v.test" and r.url.path.endswith(":generateContent")]
    assert len(sent) == 1 and "cachedContent" not in orjson.loads(sent[0].content)
    assert [r.url.host for r in upstream.calls("/cachedContents")] == ["gemini.test", "v.test"]


def test_a_request_whose_key_headers_disagree_is_left_alone(state_dir):
    """The tenant is the first key header (here the bearer token); a cache made with one
    x-goog-api-key must never be referenced by a request carrying another under that tenant."""
    upstream = Upstream()
    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        answers = []
        for key in (KEY, "AIza-someone-else"):
            answers.append(
                client.post(
                    GEN,
                    json=body("q"),
                    headers={"authorization": "Bearer shared-token", "x-goog-api-key": key},
                )
            )
            settle(manager)
    assert [a.headers["x-prefixgate-gemini-cache"] for a in answers] == ["none", "none"]
    assert upstream.calls("/cachedContents") == []


def test_a_cache_refused_again_and_again_is_not_bought_again_and_again(state_dir):
    upstream = Upstream(refuse_cached=True)
    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        for i in range(8):
            assert client.post(GEN, json=body(f"q{i}"), headers={"x-goog-api-key": KEY}).status_code == 200
            settle(manager)
    assert len(upstream.calls("/cachedContents")) == 2  # made again once at once, then backing off


def test_a_request_with_another_system_instruction_is_never_pointed_at_the_cache(state_dir):
    upstream = Upstream()
    headers = {"x-goog-api-key": KEY}
    with app_for(state_dir, upstream, gemini_auto_cache=True, gemini_auto_cache_after=1) as client:
        manager = client.app.state.gate.gemini_auto_cache.manager
        client.post(GEN, json=body("q0"), headers=headers)
        settle(manager)
        for system in ({"role": "user", **SYSTEM}, {"parts": [*SYSTEM["parts"], {"text": "and be brief"}]}):
            answer = client.post(GEN, json={**body("q1"), "systemInstruction": system}, headers=headers)
            assert answer.headers["x-prefixgate-gemini-cache"] != "hit"
            settle(manager)
    sent = [orjson.loads(r.content) for r in upstream.seen if r.url.path == GEN]
    assert all("cachedContent" not in doc for doc in sent)
