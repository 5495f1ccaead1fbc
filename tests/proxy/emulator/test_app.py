"""The emulator on a real uvicorn, driven by the official openai and anthropic SDKs."""

from __future__ import annotations

import asyncio

import anthropic
import openai
import pytest

from proxy.emulator import EmulatorConfig, create_app
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

SYSTEM = "You are the billing assistant. Policy: refunds within 30 days; no exceptions. " * 40  # ~800 tokens
LONG = SYSTEM * 3  # ~2400 tokens
CC = {"type": "ephemeral"}


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def url():
    with serve(create_app()) as base:
        yield base


def oai(url, key="sk-emu-test", cls=openai.OpenAI):
    return cls(base_url=f"{url}/v1", api_key=key, max_retries=0)


def ant(url, key="sk-ant-emu-test", cls=anthropic.Anthropic):
    return cls(base_url=url, api_key=key, max_retries=0)


def chat_body(tag: str, system: str = LONG) -> dict:
    return {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": tag + system},
            {"role": "user", "content": "Can I get a refund?"},
        ],
        "max_tokens": 12,
    }


def test_openai_chat_sync_plain_then_cached(url):
    client = oai(url)
    first = client.chat.completions.create(**chat_body("sync-plain"))
    second = client.chat.completions.create(**chat_body("sync-plain"))
    assert first.choices[0].message.content == second.choices[0].message.content
    assert "refund" in first.choices[0].message.content
    assert len(first.choices[0].message.content) == 12 * 4 and first.usage.completion_tokens == 12
    assert first.usage.prompt_tokens > 1024 and first.usage.prompt_tokens_details.cached_tokens == 0
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached >= 1024 and cached % 128 == 0 and cached < second.usage.prompt_tokens
    other_key = oai(url, key="sk-someone-else").chat.completions.create(**chat_body("sync-plain"))
    assert other_key.usage.prompt_tokens_details.cached_tokens == 0


def test_openai_chat_sync_stream_usage_only_when_asked(url):
    client = oai(url)
    plain = list(client.chat.completions.create(**chat_body("sync-stream"), stream=True))
    assert all(c.usage is None for c in plain) and all(c.choices for c in plain)
    assert plain[-1].choices[0].finish_reason == "stop"
    chunks = list(
        client.chat.completions.create(
            **chat_body("sync-stream"), stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens >= 1024  # the plain stream wrote the cache
    assert text == client.chat.completions.create(**chat_body("sync-stream")).choices[0].message.content


def test_openai_async_plain_and_stream(url):
    async def main():
        client = oai(url, cls=openai.AsyncOpenAI)
        plain = await client.chat.completions.create(**chat_body("async"))
        stream = await client.chat.completions.create(
            **chat_body("async"), stream=True, stream_options={"include_usage": True}
        )
        chunks = [c async for c in stream]
        await client.close()
        return plain, chunks

    plain, chunks = asyncio.run(main())
    assert (
        "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        == plain.choices[0].message.content
    )
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens >= 1024


def test_openai_responses_plain_and_stream(url):
    client = oai(url)
    first = client.responses.create(
        model="gpt-5", instructions="resp-" + LONG, input="Summarise the policy", max_output_tokens=20
    )
    assert first.output_text and first.usage.output_tokens == 20
    assert first.usage.input_tokens_details.cached_tokens == 0
    with client.responses.stream(
        model="gpt-5", instructions="resp-" + LONG, input="Summarise the policy", max_output_tokens=20
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert final.output_text == first.output_text
    assert final.usage.input_tokens == first.usage.input_tokens
    assert final.usage.input_tokens_details.cached_tokens >= 1024

    async def main():
        aclient = oai(url, cls=openai.AsyncOpenAI)
        stream = await aclient.responses.create(model="gpt-5", input="async responses", stream=True)
        events = [e async for e in stream]
        await aclient.close()
        return events

    events = asyncio.run(main())
    assert events[-1].type == "response.completed" and events[-1].response.usage.output_tokens == 16


def test_openai_completions_embeddings_models(url):
    client = oai(url)
    done = client.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say hi", max_tokens=3)
    assert done.choices[0].text and done.usage.completion_tokens == 3
    pieces = list(client.completions.create(model="x", prompt="Say hi", max_tokens=3, stream=True))
    assert "".join(p.choices[0].text for p in pieces) == done.choices[0].text
    emb = client.embeddings.create(
        model="text-embedding-3-small", input=["alpha", "beta"]
    )  # SDK asks for base64
    floats = client.embeddings.create(
        model="text-embedding-3-small", input=["alpha", "beta"], encoding_format="float"
    )
    assert len(emb.data) == 2 and len(emb.data[0].embedding) == 16
    assert emb.data[0].embedding == pytest.approx(floats.data[0].embedding, abs=1e-6)
    assert emb.data[0].embedding != emb.data[1].embedding
    assert "gpt-4o" in [m.id for m in client.models.list()]
    assert client.models.retrieve("any-model-name").id == "any-model-name"


def anthropic_body(tag: str, **extra) -> dict:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 10,
        "system": [{"type": "text", "text": tag + LONG, "cache_control": CC}],
        "messages": [{"role": "user", "content": "What is the refund window?"}],
        **extra,
    }


def test_anthropic_sync_plain_and_stream(url):
    client = ant(url)
    first = client.messages.create(**anthropic_body("a-sync"))
    assert first.usage.cache_creation_input_tokens > 1024 and first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == first.usage.cache_creation_input_tokens
    assert first.usage.output_tokens == 10 and first.stop_reason == "end_turn"
    with client.messages.stream(**anthropic_body("a-sync")) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == first.content[0].text
    assert final.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert final.usage.input_tokens == first.usage.input_tokens  # excludes the cached part both times
    events = list(client.messages.create(**anthropic_body("a-sync"), stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop" and "message_delta" in kinds
    assert events[0].message.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert [e for e in events if e.type == "message_delta"][0].usage.output_tokens == 10


def test_anthropic_async_plain_and_stream(url):
    async def main():
        client = ant(url, cls=anthropic.AsyncAnthropic)
        first = await client.messages.create(**anthropic_body("a-async"))
        async with client.messages.stream(**anthropic_body("a-async")) as stream:
            text = "".join([t async for t in stream.text_stream])
            final = await stream.get_final_message()
        auto = await client.messages.create(**anthropic_body("a-async", cache_control=CC))  # + the last block
        await client.close()
        return first, text, final, auto

    first, text, final, auto = asyncio.run(main())
    assert text == first.content[0].text
    assert final.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens > 0
    assert auto.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert auto.usage.cache_creation_input_tokens == first.usage.input_tokens and auto.usage.input_tokens == 0


def test_anthropic_count_tokens_models_and_rules(url):
    client = ant(url)
    counted = client.messages.count_tokens(
        model="claude-sonnet-4-6", system=LONG, messages=[{"role": "user", "content": "hi"}]
    )
    assert counted.input_tokens > 1024
    assert "claude-sonnet-4-6" in [m.id for m in client.models.list()]
    five = [{"type": "text", "text": f"part {i}", "cache_control": CC} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=5, messages=[{"role": "user", "content": five}]
        )
    assert err.value.body["type"] == "error" and err.value.body["error"]["type"] == "invalid_request_error"
    mixed = [
        {"type": "text", "text": "a", "cache_control": CC},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
    ]
    with pytest.raises(anthropic.BadRequestError, match="1h"):
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=5, messages=[{"role": "user", "content": mixed}]
        )
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=0, messages=[{"role": "user", "content": "x"}]
        )


def test_ttl_expiry_through_the_server_with_an_injected_clock():
    clock = FakeClock()
    with serve(create_app(EmulatorConfig(clock=clock, openai_ttl_s=600))) as base:
        client, aclient = oai(base), ant(base)
        client.chat.completions.create(**chat_body("ttl"))
        aclient.messages.create(**anthropic_body("ttl"))
        clock.t += 301
        assert (
            client.chat.completions.create(**chat_body("ttl")).usage.prompt_tokens_details.cached_tokens > 0
        )
        assert aclient.messages.create(**anthropic_body("ttl")).usage.cache_read_input_tokens == 0  # 5m gone
        clock.t += 601
        assert (
            client.chat.completions.create(**chat_body("ttl")).usage.prompt_tokens_details.cached_tokens == 0
        )


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1beta/cachedContents"])
def test_a_client_gone_mid_body_is_no_server_error(url, path, caplog):
    """A proxy that gives up on a request while the emulator still reads its body: no traceback."""
    import logging
    import socket
    import time

    server_log = logging.getLogger("uvicorn.error")
    server_log.addHandler(caplog.handler)
    try:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-emu-test\r\nx-goog-api-key: k\r\n"
                'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":'.encode()
            )
            time.sleep(0.2)  # the endpoint is now waiting for the rest of the body
        with openai.OpenAI(
            base_url=f"{url}/v1", api_key="sk-emu-test", max_retries=0
        ) as client:  # still serving
            assert client.models.list().data
        time.sleep(0.2)
    finally:
        server_log.removeHandler(caplog.handler)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records
    ]
