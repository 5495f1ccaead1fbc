"""End to end: the official openai and anthropic SDKs → prefixgate (uvicorn) → emulator (uvicorn).

Every test starts real servers on loopback. "Same as direct" tests run the same request
sequence against a second, fresh emulator and compare what the SDK returns.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import anthropic
import httpx
import openai
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from tests.support.gateways import gateway
from tests.support.payloads import ANTHROPIC_SYSTEM, CHAT, SYSTEM
from tests.support.sdk_clients import ANTHROPIC_KEY, OPENAI_KEY, ant, oai
from tests.support.servers import free_port, serve

pytestmark = pytest.mark.e2e


@pytest.fixture
def gw(state_dir):
    with gateway(state_dir) as g:
        yield g


@pytest.fixture
def direct():
    with serve(create_emulator()) as upstream:
        yield upstream


def stats(proxy: str) -> dict:
    return httpx.get(f"{proxy}/prefixgate/stats").json()


def same(obj) -> dict:
    """An SDK object as a dict, without the wall-clock fields two servers may disagree on."""
    data = obj.model_dump(exclude_none=False)
    for key in ("created", "created_at", "completed_at"):
        data.pop(key, None)
    if isinstance(data.get("response"), dict):
        for key in ("created_at", "completed_at"):
            data["response"].pop(key, None)
    return data


# -- same results as direct --------------------------------------------------------------


def test_openai_sync_plain_and_stream_same_as_direct(gw, direct):
    proxy = gw[0]
    results = []
    for base in (proxy, direct):
        client = oai(base)
        plain = [
            client.chat.completions.create(model="gpt-4o-mini", messages=CHAT, max_tokens=8) for _ in range(2)
        ]
        chunks = list(
            client.chat.completions.create(model="gpt-4o-mini", messages=CHAT, max_tokens=8, stream=True)
        )
        completion = client.completions.create(model="gpt-3.5-turbo-instruct", prompt=SYSTEM, max_tokens=4)
        results.append(([same(p) for p in plain], [same(c) for c in chunks], same(completion)))
    assert results[0] == results[1]
    plain, chunks, _ = results[0]
    assert plain[1]["usage"]["prompt_tokens_details"]["cached_tokens"] >= 1024
    assert all(c["usage"] is None for c in chunks)  # the usage chunk the proxy asked for is gone


def test_openai_async_plain_and_stream_same_as_direct(gw, direct):
    async def run(base):
        client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=OPENAI_KEY, max_retries=0)
        async with client:
            plain = await client.chat.completions.create(model="gpt-4o", messages=CHAT, max_tokens=6)
            stream = await client.chat.completions.create(
                model="gpt-4o",
                messages=CHAT,
                max_tokens=6,
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [same(c) async for c in stream]
            response = await client.responses.create(
                model="gpt-4o", instructions=SYSTEM, input="hello", max_output_tokens=5
            )
            events = [
                same(e)
                async for e in await client.responses.create(
                    model="gpt-4o", instructions=SYSTEM, input="hello", max_output_tokens=5, stream=True
                )
            ]
            return same(plain), chunks, same(response), events

    proxied, plain = asyncio.run(run(gw[0])), asyncio.run(run(direct))
    assert proxied == plain
    assert proxied[1][-1]["usage"]["prompt_tokens"] > 1024  # usage the client asked for is kept
    s = stats(gw[0])
    assert s["providers"]["openai"]["requests"] == 4
    assert s["output_tokens"] == 6 + 6 + 5 + 5


def test_anthropic_sync_and_async_plain_and_stream_same_as_direct(gw, direct):
    def run_sync(base):
        client = ant(base)
        msg = client.messages.create(
            model="claude-opus-5",
            max_tokens=8,
            system=ANTHROPIC_SYSTEM,
            messages=[{"role": "user", "content": "hi"}],
        )
        with client.messages.stream(
            model="claude-opus-5",
            max_tokens=8,
            system=ANTHROPIC_SYSTEM,
            messages=[{"role": "user", "content": "hi"}],
        ) as stream:
            events = [same(e) for e in stream]
            final = same(stream.get_final_message())
        count = client.messages.count_tokens(
            model="claude-opus-5", system=ANTHROPIC_SYSTEM, messages=[{"role": "user", "content": "hi"}]
        )
        return same(msg), events, final, same(count)

    async def run_async(base):
        async with anthropic.AsyncAnthropic(base_url=base, api_key=ANTHROPIC_KEY, max_retries=0) as client:
            msg = await client.messages.create(
                model="claude-opus-5",
                max_tokens=8,
                system=ANTHROPIC_SYSTEM,
                messages=[{"role": "user", "content": "yo"}],
            )
            stream = await client.messages.create(
                model="claude-opus-5",
                max_tokens=8,
                system=ANTHROPIC_SYSTEM,
                messages=[{"role": "user", "content": "yo"}],
                stream=True,
            )
            events = [same(e) async for e in stream]
            return same(msg), events

    proxied = (run_sync(gw[0]), asyncio.run(run_async(gw[0])))
    plain = (run_sync(direct), asyncio.run(run_async(direct)))
    assert proxied == plain
    s = stats(gw[0])["providers"]["anthropic"]
    assert s["requests"] == 5
    assert s["cache_write_tokens"] == proxied[0][0]["usage"]["cache_creation_input_tokens"] > 0
    reads = (
        proxied[0][2]["usage"]["cache_read_input_tokens"] + proxied[1][0]["usage"]["cache_read_input_tokens"]
    )
    stream_start = [e for e in proxied[1][1] if e["type"] == "message_start"][0]
    assert s["cached_tokens"] == reads + stream_start["message"]["usage"]["cache_read_input_tokens"] > 0


# -- what the proxy reports ---------------------------------------------------------------


def test_cached_tokens_reported_by_the_emulator_show_in_stats(gw):
    proxy = gw[0]
    client = oai(proxy)
    seen = []
    for _ in range(3):
        seen.append(client.chat.completions.create(model="gpt-4o", messages=CHAT, max_tokens=4).usage)
    streamed = list(client.chat.completions.create(model="gpt-4o", messages=CHAT, max_tokens=4, stream=True))
    assert streamed and all(c.usage is None for c in streamed)
    s = stats(proxy)
    model = [m for m in s["models"] if m["model"] == "gpt-4o"][0]
    cached = sum(u.prompt_tokens_details.cached_tokens for u in seen)
    assert cached > 0
    # the stream's usage (proxy-requested, hidden from the client) counts too: same prompt as #2
    assert model["cached_tokens"] == cached + seen[1].prompt_tokens_details.cached_tokens
    assert model["input_tokens"] == 4 * seen[0].prompt_tokens
    assert (s["requests"], s["prefix_hits"]) == (4, 3)


def test_repeated_system_prompt_shows_in_prefix_headers(gw):
    proxy = gw[0]
    client = oai(proxy)
    first = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
    second = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[CHAT[0], {"role": "user", "content": "something else"}], max_tokens=4
    )
    assert first.headers["x-prefixgate-prefix-segments"] == "0"
    assert second.headers["x-prefixgate-prefix-segments"] == "1"
    assert int(second.headers["x-prefixgate-prefix-bytes"]) >= len(SYSTEM)
    assert first.headers["x-prefixgate-request-id"] != second.headers["x-prefixgate-request-id"]
    aclient = ant(proxy)
    kw = dict(model="claude-opus-5", max_tokens=4, system=ANTHROPIC_SYSTEM)
    aclient.messages.with_raw_response.create(messages=[{"role": "user", "content": "a"}], **kw)
    again = aclient.messages.with_raw_response.create(messages=[{"role": "user", "content": "b"}], **kw)
    assert again.headers["x-prefixgate-prefix-segments"] == "1"
    assert again.parse().usage.cache_read_input_tokens > 0


def test_stream_is_relayed_before_the_upstream_sends_chunk_two(gw):
    proxy, upstream, spy, _ = gw
    token = uuid.uuid4().hex
    stream = oai(proxy).chat.completions.create(
        model="gpt-4o", messages=CHAT, max_tokens=8, stream=True, extra_headers={"x-emulator-hold": token}
    )
    it = iter(stream)
    first = next(it)
    # The emulator has sent its first event only and is holding the rest.
    assert len(spy.bodies) == 1 and not spy.finished.is_set()
    assert first.choices[0].delta.role == "assistant"
    httpx.post(f"{upstream}/_emulator/release/{token}")
    rest = list(it)
    assert spy.finished.is_set() and len(spy.bodies) > 2
    assert "".join(c.choices[0].delta.content or "" for c in rest if c.choices)


def test_client_disconnect_mid_stream_closes_the_upstream_stream(gw):
    proxy, upstream, spy, _ = gw
    token = uuid.uuid4().hex
    body = {"model": "gpt-4o", "messages": CHAT, "stream": True, "max_tokens": 8}
    with httpx.Client(timeout=10) as client:
        with client.stream(
            "POST", f"{proxy}/v1/chat/completions", json=body, headers={"x-emulator-hold": token}
        ) as r:
            first = next(r.iter_raw())
            assert first.startswith(b"data: ")
    # The client is gone while the emulator holds its stream: the proxy must hang up on it.
    assert spy.disconnected.wait(5), "upstream stream was not closed after the client left"
    assert not spy.finished.is_set()
    deadline = time.monotonic() + 5
    while stats(proxy)["errors"] < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert stats(proxy)["errors"] == 1


# -- bad input -----------------------------------------------------------------------------


def test_upstream_4xx_is_relayed_verbatim_and_counted(gw, direct):
    proxy = gw[0]
    h = {"x-emulator-status": "429", "authorization": f"Bearer {OPENAI_KEY}"}
    via = httpx.post(f"{proxy}/v1/chat/completions", json={"model": "m", "messages": CHAT}, headers=h)
    plain = httpx.post(f"{direct}/v1/chat/completions", json={"model": "m", "messages": CHAT}, headers=h)
    assert (via.status_code, via.content) == (plain.status_code, plain.content) == (429, plain.content)
    with pytest.raises(anthropic.RateLimitError) as info:
        ant(proxy).messages.create(
            model="c",
            max_tokens=4,
            messages=[{"role": "user", "content": "x"}],
            extra_headers={"x-emulator-status": "429"},
        )
    assert info.value.status_code == 429 and "x-prefixgate-error" not in info.value.response.headers
    assert stats(proxy)["errors"] == 2


def test_body_over_max_body_is_413(state_dir):
    with gateway(state_dir, max_body=2048) as (proxy, *_):
        with pytest.raises(openai.APIStatusError) as info:
            oai(proxy).chat.completions.create(model="gpt-4o", messages=CHAT)
        assert info.value.status_code == 413 and info.value.body["code"] == "body_too_large"
        with pytest.raises(anthropic.APIStatusError) as ainfo:
            ant(proxy).messages.create(
                model="c", max_tokens=4, system=SYSTEM, messages=[{"role": "user", "content": "x"}]
            )
        assert ainfo.value.status_code == 413 and ainfo.value.body["error"]["type"] == "request_too_large"
        assert stats(proxy)["errors"] == 2


def test_refused_connection_is_502_in_each_providers_shape(state_dir):
    dead = f"http://127.0.0.1:{free_port()}"
    cfg = ProxyConfig(openai_base=f"{dead}/v1", anthropic_base=dead, state_dir=state_dir)
    with serve(create_app(cfg)) as proxy:
        with pytest.raises(openai.InternalServerError) as info:
            oai(proxy).chat.completions.create(model="gpt-4o", messages=CHAT)
        assert info.value.status_code == 502 and info.value.body["type"] == "api_error"
        with pytest.raises(anthropic.InternalServerError) as ainfo:
            ant(proxy).messages.create(model="c", max_tokens=4, messages=[{"role": "user", "content": "x"}])
        assert ainfo.value.status_code == 502 and ainfo.value.body["error"]["type"] == "api_error"
        assert stats(proxy)["errors"] == 2


def test_upstream_timeout_is_504(state_dir):
    with gateway(state_dir, read_timeout=0.2) as (proxy, *_):
        with pytest.raises(openai.APIStatusError) as info:
            oai(proxy).chat.completions.create(
                model="gpt-4o", messages=CHAT, extra_headers={"x-emulator-delay-ms": "700"}
            )
        assert info.value.status_code == 504 and info.value.body["code"] == "upstream_timeout"
        with pytest.raises(anthropic.APIStatusError) as ainfo:
            ant(proxy).messages.create(
                model="c",
                max_tokens=4,
                messages=[{"role": "user", "content": "x"}],
                extra_headers={"x-emulator-delay-ms": "700"},
            )
        assert ainfo.value.status_code == 504 and ainfo.value.body["error"]["type"] == "timeout_error"


def test_unparseable_body_is_forwarded_and_counted_unanalysed(gw):
    proxy = gw[0]
    r = httpx.post(
        f"{proxy}/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]  # the emulator's answer
    s = stats(proxy)
    assert (s["requests"], s["unanalysed"]) == (1, 1)


def test_models_route_per_provider(gw):
    proxy = gw[0]
    assert oai(proxy).models.list().data
    assert ant(proxy).models.list().data


# -- stores --------------------------------------------------------------------------------


def test_redis_store_end_to_end(state_dir, redis_url):
    import redis

    url, prefix = redis_url
    with gateway(state_dir, store=f"{url}?key_prefix={prefix}", store_timeout=2.0) as (
        proxy,
        *_,
    ):  # the deadline is test_guard's
        client = oai(proxy)
        first = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        second = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=CHAT, max_tokens=4)
        assert (
            first.headers["x-prefixgate-prefix-segments"],
            second.headers["x-prefixgate-prefix-segments"],
        ) == ("0", "2")
        assert httpx.get(f"{proxy}/prefixgate/health").json()["store"] == "redis"
    keys = [
        k
        for k in redis.Redis.from_url(url).scan_iter(match=prefix + "{*")
        if not k.startswith(f"{prefix}{{fleet}}".encode())
    ]
    assert len(keys) == 2  # chain keys: prefix{tenant}:hash (beside them the fleet totals' {fleet} keys)
    assert redis.Redis.from_url(url).exists(prefix + "tenant-secret")  # the replicas' shared tenant secret
