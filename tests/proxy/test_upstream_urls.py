"""proxy.upstream_urls: provider choice, upstream URLs, and never an open proxy."""

from __future__ import annotations

import pytest

from proxy.endpoints import ANTHROPIC, OPENAI, Kind, endpoint_for
from proxy.upstream_urls import BadPath, Router

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
        (
            b"/v1/chat/completions/",
            {},
            Kind.CHAT,
            True,
            True,
            "chat",
            True,
        ),  # a trailing "/" is the same endpoint
        (b"/v1/completions", {}, Kind.COMPLETIONS, True, True, "chat", True),
        (b"/v1/responses", {}, Kind.RESPONSES, True, True, "responses", False),
        (b"/v1/embeddings", {}, Kind.EMBEDDINGS, True, False, "chat", False),
        (b"/v1/models", {}, Kind.OTHER, False, False, "chat", False),
        (b"/v1/messages", {}, Kind.MESSAGES, True, True, "anthropic", False),
        (b"/v1/messages/count_tokens", {}, Kind.OTHER, False, False, "anthropic", False),
        (
            b"/v1/chat/completions",
            {"x-api-key": "k"},
            Kind.CHAT,
            True,
            True,
            "anthropic",
            False,
        ),  # the provider decides the usage shape
    ],
)
def test_the_router_resolves_the_endpoint_once(path, headers, kind, billable, caches, usage, ask):
    endpoint = ROUTER.resolve(path, b"", headers).endpoint
    assert (endpoint.kind, endpoint.billable, endpoint.caches, endpoint.usage, endpoint.ask_stream_usage) == (
        kind,
        billable,
        caches,
        usage,
        ask,
    )


def test_endpoints_are_shared_not_built_per_request():
    assert (
        ROUTER.resolve(b"/v1/chat/completions", b"a=1", {}).endpoint
        is ROUTER.resolve(b"/v1/%63hat/completions", b"", {}).endpoint
    )
    assert (
        endpoint_for(OPENAI, "/v1/chat/completions")
        is ROUTER.resolve(b"/v1/chat/completions", b"", {}).endpoint
    )


# -- named upstreams, Gemini, and the no-open-proxy rule across names ----------------------------

from proxy.config import UpstreamSpec  # noqa: E402
from proxy.endpoints import GEMINI  # noqa: E402

NAMED = Router(
    "http://10.0.0.1:9000/gw/v1",
    "http://10.0.0.2:9001",
    "http://10.0.0.3:9002",
    [
        UpstreamSpec("deepseek", "openai", "http://10.0.1.1/v1", rules="deepseek"),
        UpstreamSpec("groq", "openai", "http://10.0.1.2/openai/v1"),
        UpstreamSpec("azure", "openai", "http://10.0.1.3/openai"),
        UpstreamSpec("orouter", "anthropic", "http://10.0.1.4/api"),
        UpstreamSpec("vertex", "gemini", "http://10.0.1.5/gem"),
    ],
)


@pytest.mark.parametrize(
    "path, query, headers, upstream, provider, url",
    [
        (
            b"/deepseek/v1/chat/completions",
            b"",
            {},
            "deepseek",
            OPENAI,
            "http://10.0.1.1/v1/chat/completions",
        ),
        (b"/groq/v1/chat/completions", b"", {}, "groq", OPENAI, "http://10.0.1.2/openai/v1/chat/completions"),
        # Azure's SDK: azure_endpoint=http://proxy/azure → /azure/openai/deployments/...?api-version=
        (
            b"/azure/openai/deployments/gpt-4o/chat/completions",
            b"api-version=2024-10-21",
            {"api-key": "k"},
            "azure",
            OPENAI,
            "http://10.0.1.3/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        ),
        (
            b"/azure/openai/v1/chat/completions",
            b"",
            {},
            "azure",
            OPENAI,
            "http://10.0.1.3/openai/v1/chat/completions",
        ),
        (b"/orouter/v1/messages", b"", {}, "orouter", ANTHROPIC, "http://10.0.1.4/api/v1/messages"),
        (
            b"/vertex/v1beta/models/gemini-2.5-flash:generateContent",
            b"",
            {},
            "vertex",
            GEMINI,
            "http://10.0.1.5/gem/v1beta/models/gemini-2.5-flash:generateContent",
        ),
        # the defaults, under their own names too
        (b"/openai/v1/models", b"", {}, "openai", OPENAI, "http://10.0.0.1:9000/gw/v1/models"),
        (b"/anthropic/v1/messages", b"", {}, "anthropic", ANTHROPIC, "http://10.0.0.2:9001/v1/messages"),
        (
            b"/gemini/v1/models/gemini-2.5-pro:countTokens",
            b"",
            {},
            "gemini",
            GEMINI,
            "http://10.0.0.3:9002/v1/models/gemini-2.5-pro:countTokens",
        ),
        # Gemini at the root: /v1beta, and /v1 told apart from OpenAI by :method or x-goog-api-key
        (
            b"/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            b"alt=sse",
            {},
            "gemini",
            GEMINI,
            "http://10.0.0.3:9002/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
        (
            b"/v1/models/gemini-2.5-flash:generateContent",
            b"",
            {},
            "gemini",
            GEMINI,
            "http://10.0.0.3:9002/v1/models/gemini-2.5-flash:generateContent",
        ),
        (b"/v1/models", b"", {"x-goog-api-key": "k"}, "gemini", GEMINI, "http://10.0.0.3:9002/v1/models"),
        (
            b"/v1/models/ft:gpt-4o-mini:org::abc",
            b"",
            {},
            "openai",
            OPENAI,
            "http://10.0.0.1:9000/gw/v1/models/ft:gpt-4o-mini:org::abc",
        ),
        (
            b"/upload/v1beta/files",
            b"uploadType=resumable",
            {},
            "gemini",
            GEMINI,
            "http://10.0.0.3:9002/upload/v1beta/files?uploadType=resumable",
        ),
        (
            b"/vertex/upload/v1beta/files",
            b"",
            {},
            "vertex",
            GEMINI,
            "http://10.0.1.5/gem/upload/v1beta/files",
        ),
    ],
)
def test_named_upstreams_route_under_their_prefix(path, query, headers, upstream, provider, url):
    target = NAMED.resolve(path, query, headers)
    assert (target.upstream, target.provider, str(target.url), target.route) == (
        upstream,
        provider,
        url,
        path.decode(),
    )


def test_rules_and_the_model_gemini_names_in_its_path():
    assert NAMED.resolve(b"/deepseek/v1/chat/completions", b"", {}).rules == "deepseek"
    assert NAMED.resolve(b"/groq/v1/chat/completions", b"", {}).rules == "openai"  # default: the protocol's
    target = NAMED.resolve(b"/v1beta/models/gemini-2.5-flash:streamGenerateContent", b"alt=sse", {})
    assert (target.model, target.endpoint.kind, target.endpoint.stream, target.endpoint.usage) == (
        "gemini-2.5-flash",
        Kind.STREAM_GENERATE,
        True,
        "gemini",
    )
    plain = NAMED.resolve(b"/vertex/v1/models/gemini-3.5-flash:generateContent", b"", {})
    assert (plain.model, plain.endpoint.kind, plain.endpoint.caches, plain.endpoint.stream) == (
        "gemini-3.5-flash",
        Kind.GENERATE,
        True,
        False,
    )
    assert NAMED.resolve(b"/v1beta/models/gemini-2.5-flash:countTokens", b"", {}).endpoint.billable is False
    assert NAMED.resolve(b"/v1beta/models", b"", {}).endpoint.kind is Kind.OTHER


@pytest.mark.parametrize(
    "path",
    [
        b"/deepseek/../openai/v1/models",
        b"/deepseek/v1/../../openai/v1/models",
        b"/deepseek/%2e%2e/openai/v1/models",
        b"/deepseek%2f..%2fopenai/v1/models",
        b"/deepseek/v1/%2e%2e/%2e%2e/x",
        b"/deepseek//v1/models",
        b"//deepseek/v1/models",
        b"/azure/openai/..",
        b"/vertex/v1beta/models/x%5c..%5cy",
    ],
)
def test_path_tricks_across_names_are_refused(path):
    with pytest.raises(BadPath) as info:
        NAMED.resolve(path, b"", {})
    assert info.value.status == 400


@pytest.mark.parametrize(
    "path",
    [
        b"/deepseekx/v1/models",
        b"/DeepSeek/v1/models",  # names are exact
        b"/deepseek/v2/models",  # its base is /v1: /deepseek/v1/...
        b"/deepseek/models",
        b"/deepseek",
        b"/deepseek/",
        b"/azure/v1/chat/completions",  # Azure's base ends in /openai: /azure/openai/...
        b"/orouter/v2/messages",
        b"/vertex/models/x:generateContent",
        b"/evil.example/v1/models",
        b"/10.0.1.1/v1/models",
        b"/v1beta",
        b"/v1beta/",
        b"/upload/files",
        b"/upload",
    ],
)
def test_unknown_prefixes_and_shapes_are_404(path):
    with pytest.raises(BadPath) as info:
        NAMED.resolve(path, b"", {})
    assert info.value.status == 404


def test_the_404_names_the_configured_prefixes():
    with pytest.raises(BadPath) as info:
        NAMED.resolve(b"/nope/v1/chat/completions", b"", {})
    message = str(info.value)
    assert info.value.provider == OPENAI and "/nope" in message
    assert all(
        f"/{name}/" in message
        for name in ("openai", "anthropic", "gemini", "deepseek", "groq", "azure", "orouter", "vertex")
    )
    with pytest.raises(BadPath) as info:
        NAMED.resolve(b"/deepseek/v2/models", b"", {})
    assert "/deepseek/v1/..." in str(info.value) and info.value.upstream == "deepseek"


def test_every_host_reached_is_a_configured_base_whatever_the_name_or_headers():
    bases = {("http", "10.0.0.1", 9000), ("http", "10.0.0.2", 9001), ("http", "10.0.0.3", 9002)} | {
        ("http", f"10.0.1.{i}", None) for i in range(1, 6)
    }
    reached = set()
    prefixes = [
        b"/v1",
        b"/v1beta",
        b"/deepseek/v1",
        b"/groq/v1",
        b"/azure/openai",
        b"/orouter/v1",
        b"/vertex/v1beta",
        b"/openai/v1",
        b"/gemini/v1",
    ]
    rests = [
        b"/chat/completions",
        b"/messages",
        b"/models/m:generateContent",
        b"/x@evil.example/y",
        b"/http:/evil.example/",
        b"/models",
    ]
    headers_list = ({}, {"host": "evil.example"}, {"x-api-key": "k"}, {"x-goog-api-key": "k"})
    for prefix in prefixes:
        for rest in rests:
            for headers in headers_list:
                try:
                    url = NAMED.resolve(prefix + rest, b"u=http://evil.example/&key=x", headers).url
                except BadPath:
                    continue
                reached.add((url.scheme, url.host, url.port))
    assert reached and reached <= bases
    assert len(reached) == len(bases)


def test_two_upstreams_cannot_share_a_prefix():
    with pytest.raises(ValueError, match="duplicate"):
        Router(
            "http://a/v1",
            "http://b",
            None,
            [UpstreamSpec("x", "openai", "http://c/v1"), UpstreamSpec("x", "openai", "http://d/v1")],
        )
