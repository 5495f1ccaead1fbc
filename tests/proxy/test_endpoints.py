"""proxy.endpoints: a path's kind by its ending, Gemini's ``:method``, and the shared endpoints."""

from __future__ import annotations

import pytest

from proxy.endpoints import (
    ANTHROPIC,
    ENDPOINTS,
    GEMINI,
    OPENAI,
    PROVIDERS,
    Kind,
    endpoint_for,
    gemini_method,
    kind_of,
)


@pytest.mark.parametrize(
    "route, kind",
    [
        ("/v1/chat/completions", Kind.CHAT),
        ("/v1/chat/completions/", Kind.CHAT),
        ("/v1/completions", Kind.COMPLETIONS),
        ("/v1/responses", Kind.RESPONSES),
        ("/v1/responses/compact", Kind.COMPACT),
        ("/v1/messages", Kind.MESSAGES),
        ("/openai/deployments/d/embeddings", Kind.EMBEDDINGS),
        ("/v1/messages/count_tokens", Kind.OTHER),
        ("/v1/models", Kind.OTHER),
    ],
)
def test_the_kind_is_the_paths_ending(route, kind):
    assert kind_of(route) is kind


@pytest.mark.parametrize(
    "route, model, kind",
    [
        ("/v1beta/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", Kind.GENERATE),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-2.5-flash", Kind.STREAM_GENERATE),
        ("/v1/tunedModels/t1:embedContent", "t1", Kind.EMBEDDINGS),
        ("/v1beta/models/m:batchGenerateContent", "m", Kind.OTHER),
        ("/v1beta/models/m:unknownMethod", None, None),
        ("/v1/models/gpt-4o", None, None),
    ],
)
def test_gemini_methods_name_the_model_and_the_kind(route, model, kind):
    assert gemini_method(route) == (model, kind)


def test_the_facts_of_an_endpoint_follow_its_provider_and_kind():
    chat = endpoint_for(OPENAI, "/v1/chat/completions")
    assert (chat.billable, chat.caches, chat.usage, chat.ask_stream_usage, chat.stream) == (
        True,
        True,
        "chat",
        True,
        False,
    )
    assert endpoint_for(OPENAI, "/v1/responses").usage == "responses"
    assert endpoint_for(ANTHROPIC, "/v1/chat/completions").usage == "anthropic"
    embeddings = endpoint_for(OPENAI, "/v1/embeddings")
    assert embeddings.billable and not embeddings.caches and not embeddings.ask_stream_usage
    stream = endpoint_for(GEMINI, "/v1beta/models/m:streamGenerateContent")
    assert (stream.kind, stream.usage, stream.stream, stream.caches) == (
        Kind.STREAM_GENERATE,
        "gemini",
        True,
        True,
    )
    assert not endpoint_for(GEMINI, "/v1beta/files").billable


def test_one_shared_endpoint_per_provider_and_kind():
    assert len(ENDPOINTS) == len(PROVIDERS) * len(Kind)
    assert endpoint_for(OPENAI, "/a/chat/completions") is endpoint_for(OPENAI, "/b/chat/completions/")
    assert endpoint_for(GEMINI, "/v1beta/files") is ENDPOINTS[GEMINI, Kind.OTHER]
