"""proxy.body_analysis: bodies → segments and chain; the include_usage splice."""

from __future__ import annotations

import json

import httpx
import orjson

from proxy.body_analysis import (
    analyse as _analyse,
)
from proxy.body_analysis import (
    needs_stream_usage as _needs_stream_usage,
)
from proxy.body_analysis import (
    with_stream_usage,
)
from proxy.endpoints import endpoint_for
from proxy.upstream_urls import Target


def target(provider: str, route: str) -> Target:
    return Target(provider, route, httpx.URL("http://upstream.test" + route), endpoint_for(provider, route))


def analyse(provider: str, route: str, raw: bytes):
    """The analysis of ``raw`` sent to ``route`` at ``provider`` (as the router resolves it)."""
    return _analyse(target(provider, route), raw)


def needs_stream_usage(provider: str, route: str, analysis) -> bool:
    return _needs_stream_usage(endpoint_for(provider, route), analysis)


def test_chat_body_is_segmented_and_chained_per_model():
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "S" * 400}, {"role": "user", "content": "q"}],
    }
    a = analyse("openai", "/v1/chat/completions", json.dumps(body).encode())
    assert a.analysed and a.caches and a.model == "gpt-4o" and not a.stream
    assert len(a.segments) == 2 and len(a.chain) == 2
    assert a.total_bytes == sum(len(s.data) for s in a.segments)
    other_model = analyse(
        "openai", "/v1/chat/completions", json.dumps({**body, "model": "gpt-4o-mini"}).encode()
    )
    assert other_model.chain.hashes[0] != a.chain.hashes[0]


def test_unparseable_and_non_object_bodies_are_unanalysed():
    for raw in (b"not json", b"[1,2]", b"\xff\xfe", b'{"a":'):
        a = analyse("openai", "/v1/chat/completions", raw)
        assert not a.analysed and a.chain is None and a.segments == []


def test_empty_body_and_routes_without_caching():
    assert analyse("openai", "/v1/models", b"").analysed
    emb = analyse("openai", "/v1/embeddings", b'{"model":"e","input":"x"}')
    assert emb.analysed and not emb.caches and emb.chain is None
    count = analyse(
        "anthropic", "/v1/messages/count_tokens", b'{"model":"c","messages":[{"role":"user","content":"x"}]}'
    )
    assert count.segments and not count.caches  # measured, but never recorded as "sent"


def test_stream_usage_splice_keeps_other_bytes():
    raw = b'{ "model" : "m",\n "stream": true, "messages": [] }'
    a = analyse("openai", "/v1/chat/completions", raw)
    assert needs_stream_usage("openai", "/v1/chat/completions", a)
    out = with_stream_usage(raw, a)
    assert (
        out == b'{"stream_options":{"include_usage":true}, "model" : "m",\n "stream": true, "messages": [] }'
    )
    assert orjson.loads(out)["stream_options"] == {"include_usage": True}


def test_stream_usage_merges_existing_options():
    raw = b'{"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1}}'
    a = analyse("openai", "/v1/chat/completions", raw)
    assert needs_stream_usage("openai", "/v1/chat/completions", a)
    assert orjson.loads(with_stream_usage(raw, a))["stream_options"] == {"include_usage": True, "x": 1}


def test_no_splice_when_not_needed():
    asked = analyse(
        "openai", "/v1/chat/completions", b'{"stream":true,"stream_options":{"include_usage":true}}'
    )
    assert not needs_stream_usage("openai", "/v1/chat/completions", asked)
    plain = analyse("openai", "/v1/chat/completions", b'{"stream":false}')
    assert not needs_stream_usage("openai", "/v1/chat/completions", plain)
    anthropic = analyse("anthropic", "/v1/messages", b'{"stream":true}')
    assert not needs_stream_usage("anthropic", "/v1/messages", anthropic)
    responses = analyse("openai", "/v1/responses", b'{"stream":true}')
    assert not needs_stream_usage("openai", "/v1/responses", responses)
