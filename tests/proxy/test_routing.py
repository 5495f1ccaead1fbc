"""proxy.routing: provider choice, upstream URLs, and never an open proxy."""

from __future__ import annotations

import pytest

from proxy.routing import ANTHROPIC, OPENAI, BadPath, Kind, Router, endpoint_for

ROUTER = Router("http://10.0.0.1:9000/gw/v1", "http://10.0.0.2:9001")


@pytest.mark.parametrize(
    "path, provider, url",
    [
        (b"/v1/chat/completions", OPENAI, "http://10.0.0.1:9000/gw/v1/chat/completions"),
        (b"/v1/responses", OPENAI, "http://10.0.0.1:9000/gw/v1/responses"),
        (b"/v1/embeddings", OPENAI, "http://10.0.0.1:9000/gw/v1/embeddings"),
        (b"/v1/models", OPENAI, "http://10.0.0.1:9000/gw/v1/models"),
        (b"/v1/files/file-abc/content", OPENAI, "http://10.0.0.1:9000/gw/v1/files/file-abc/content"),
        (b"/v1/messages", ANTHROPIC, "http://10.0.0.2:9001/v1/messages"),
        (b"/v1/messages/count_tokens", ANTHROPIC, "http://10.0.0.2:9001/v1/messages/count_tokens"),
        (b"/v1/messages/batches", ANTHROPIC, "http://10.0.0.2:9001/v1/messages/batches"),
    ],
)
def test_routes_by_path(path, provider, url):
    target = ROUTER.resolve(path, b"", {})
    assert (target.provider, str(target.url), target.route) == (provider, url, path.decode())


def test_anthropic_headers_send_models_to_anthropic():
    assert ROUTER.resolve(b"/v1/models", b"", {"anthropic-version": "2023-06-01"}).provider == ANTHROPIC
    assert ROUTER.resolve(b"/v1/models", b"", {"x-api-key": "k"}).url.host == "10.0.0.2"
    assert ROUTER.resolve(b"/v1/models", b"", {"authorization": "Bearer k"}).provider == OPENAI


def test_query_string_kept_byte_for_byte():
    target = ROUTER.resolve(b"/v1/models", b"limit=2&after=a%20b&x=%2F", {})
    assert target.url.raw_path == b"/gw/v1/models?limit=2&after=a%20b&x=%2F"


@pytest.mark.parametrize(
    "path",
    [
        b"/v1/../admin",
        b"/v1/chat/../../x",
        b"/v1/./models",
        b"/v1//evil.example/x",
        b"/v1/%2e%2e/secret",
        b"/v1/a%2Fb",
        b"/v1/a%5c..%5cb",
        b"/v1/a\\b",
        b"/v1/..",
        b"/v1/mod\x00els",
    ],
)
def test_paths_that_could_escape_the_base_are_refused(path):
    with pytest.raises(BadPath) as info:
        ROUTER.resolve(path, b"", {})
    assert info.value.status == 400


@pytest.mark.parametrize("path", [b"/v2/chat", b"/admin", b"/", b"/v1/", b"http://evil.example/v1/models"])
def test_non_v1_paths_are_not_forwarded(path):
    with pytest.raises(BadPath) as info:
        ROUTER.resolve(path, b"", {})
    assert info.value.status == 404


def test_host_only_ever_comes_from_the_configured_bases():
    hosts = set()
    for path in (b"/v1/chat/completions", b"/v1/messages", b"/v1/x@evil.example/y", b"/v1/models"):
        for headers in ({}, {"host": "evil.example"}, {"x-api-key": "k"}):
            url = ROUTER.resolve(path, b"u=http://evil.example/", headers).url
            hosts.add((url.scheme, url.host, url.port))
    assert hosts == {("http", "10.0.0.1", 9000), ("http", "10.0.0.2", 9001)}


def test_bad_base_is_rejected():
    with pytest.raises(ValueError):
        Router("ftp://x", "http://y")


@pytest.mark.parametrize(
    "path, provider, route",
    [
        (b"/v1/%63hat/completions", OPENAI, "/v1/chat/completions"),
        (b"/v1/%6D%65ssages", ANTHROPIC, "/v1/messages"),
        (b"/%761/responses", OPENAI, "/v1/responses"),
        (b"/v1/files/a%20b", OPENAI, "/v1/files/a%20b"),  # reserved and other escapes stay as sent
    ],
)
def test_escaped_unreserved_characters_route_as_the_path_they_spell(path, provider, route):
    # Before: "/v1/%63hat/completions" reached the upstream's chat endpoint while the proxy
    # saw another route, so its usage and prefix went uncounted.
    target = ROUTER.resolve(path, b"", {})
    assert (target.provider, target.route) == (provider, route)
    assert target.url.raw_path.endswith(route.encode()[3:] if provider == OPENAI else route.encode())


@pytest.mark.parametrize(
    "path, headers, kind, billable, caches, usage, ask",
    [
        (b"/v1/chat/completions", {}, Kind.CHAT, True, True, "chat", True),
        (b"/v1/chat/completions/", {}, Kind.CHAT, True, True, "chat", True),  # a trailing "/" is the same endpoint
        (b"/v1/completions", {}, Kind.COMPLETIONS, True, True, "chat", True),
        (b"/v1/responses", {}, Kind.RESPONSES, True, True, "responses", False),
        (b"/v1/embeddings", {}, Kind.EMBEDDINGS, True, False, "chat", False),
        (b"/v1/models", {}, Kind.OTHER, False, False, "chat", False),
        (b"/v1/messages", {}, Kind.MESSAGES, True, True, "anthropic", False),
        (b"/v1/messages/count_tokens", {}, Kind.OTHER, False, False, "anthropic", False),
        (b"/v1/chat/completions", {"x-api-key": "k"}, Kind.CHAT, True, True, "anthropic", False),  # the provider decides the usage shape
    ],
)
def test_the_router_resolves_the_endpoint_once(path, headers, kind, billable, caches, usage, ask):
    endpoint = ROUTER.resolve(path, b"", headers).endpoint
    assert (endpoint.kind, endpoint.billable, endpoint.caches, endpoint.usage, endpoint.ask_stream_usage) == (kind, billable, caches, usage, ask)


def test_endpoints_are_shared_not_built_per_request():
    assert ROUTER.resolve(b"/v1/chat/completions", b"a=1", {}).endpoint is ROUTER.resolve(b"/v1/%63hat/completions", b"", {}).endpoint
    assert endpoint_for(OPENAI, "/v1/chat/completions") is ROUTER.resolve(b"/v1/chat/completions", b"", {}).endpoint
