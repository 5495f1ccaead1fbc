"""OpenAI request parsing and response shapes for the engine's server (unit tests, no model)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kvcache.params import Timings  # noqa: E402
from kvcache.server.protocol import RequestError, ResponseBuilder, parse_request, usage  # noqa: E402

pytestmark = pytest.mark.local


def test_chat_request_fields():
    req = parse_request(
        {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "max_completion_tokens": 7,
            "temperature": 0,
            "top_p": 0.5,
            "seed": 3,
            "stop": "x",
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        chat=True,
    )
    assert req.messages == [{"role": "user", "content": "hi"}]
    assert (req.max_tokens, req.sampling.temperature, req.sampling.top_p, req.sampling.seed) == (
        7,
        0.0,
        0.5,
        3,
    )
    assert req.stops == ["x"] and req.stream and req.include_usage


def test_a_null_max_completion_tokens_falls_back_to_max_tokens():
    assert (
        parse_request({"prompt": "x", "max_completion_tokens": None, "max_tokens": 5}, chat=False).max_tokens
        == 5
    )


def test_completion_defaults_follow_openai():
    req = parse_request({"prompt": "hello"}, chat=False)
    assert req.max_tokens == 16 and req.sampling.temperature == 1.0 and not req.stream
    ids = parse_request({"prompt": [1, 2, 3]}, chat=False)
    assert ids.prompt_ids == [1, 2, 3] and ids.prompt is None


@pytest.mark.parametrize(
    "body, chat, param",
    [
        ([], True, None),
        ({"messages": []}, True, "messages"),
        ({"messages": [{"content": "no role"}]}, True, "messages"),
        ({"prompt": ["a", "b"]}, False, "prompt"),
        ({"prompt": "x", "n": 2}, False, "n"),
        ({"prompt": "x", "max_tokens": 0}, False, "max_tokens"),
        ({"prompt": "x", "temperature": "hot"}, False, "temperature"),
        ({"prompt": "x", "stop": 5}, False, "stop"),
        ({"prompt": "x", "seed": 1.5}, False, "seed"),
        ({"prompt": "x", "stream": "yes"}, False, "stream"),
        ({"prompt": "x", "stream_options": True}, False, "stream_options"),
        ({"prompt": "x", "max_completion_tokens": -1, "max_tokens": 5}, False, "max_completion_tokens"),
    ],
)
def test_invalid_requests_name_the_parameter(body, chat, param):
    with pytest.raises(RequestError) as info:
        parse_request(body, chat)
    assert info.value.param == param


def test_usage_counts_cached_prompt_tokens():
    block = usage(Timings(prompt_tokens=100, cached_tokens=64), completion_tokens=5)
    assert block == {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 64},
    }


def test_chunk_shapes():
    chat = ResponseBuilder(chat=True, model="m")
    first = chat.chunk("he", first=True)
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"] == {
        "role": "assistant",
        "content": "he",
    }
    assert chat.chunk(None, finish_reason="stop")["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    text = ResponseBuilder(chat=False, model="m")
    assert text.chunk("x")["object"] == "text_completion" and text.chunk("x")["choices"][0]["text"] == "x"
    assert chat.usage_chunk({"prompt_tokens": 1}, {})["choices"] == []
