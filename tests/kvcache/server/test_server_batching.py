"""The engine's server with many clients at once (official openai SDK and httpx against a real uvicorn):
concurrent streams batched into shared steps with the same text as alone, /v1/responses, /metrics,
disconnects freeing blocks at once, and 300 requests with random lengths and random disconnects at
concurrency 16 leaving every block back in the pool and no 5xx."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest

torch = pytest.importorskip("torch")
openai = pytest.importorskip("openai")

import httpx  # noqa: E402

from kvcache.engine.engine import Engine, EngineConfig  # noqa: E402
from kvcache.server.app import create_app  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint  # noqa: E402
from tests.support.servers import serve  # noqa: E402

pytestmark = [pytest.mark.local, pytest.mark.e2e]
SYSTEM = "You are a careful assistant. Answer in one short line, and cite the module you used."


@pytest.fixture(scope="module")
def engine():
    eng = Engine(EngineConfig(model_path=str(checkpoint("llama3")), threads=1, max_context=256, block_size=4))
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def base_url(engine):
    with serve(create_app(engine)) as url:
        yield url


@pytest.fixture
def client(base_url):
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="not-needed", max_retries=0)


def idle(engine: Engine, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while engine.loop.busy():
        assert time.monotonic() < deadline, (
            f"engine still busy: {engine.scheduler.running} {engine.scheduler.waiting}"
        )
        time.sleep(0.01)


def all_blocks_free(engine: Engine) -> bool:
    manager = engine.pool.manager
    return manager.num_free == len(manager.blocks) and all(b.ref_count == 0 for b in manager.blocks)


def stream_text(client, prompt: str) -> str:
    chunks = client.completions.create(model="any", prompt=prompt, max_tokens=12, temperature=0, stream=True)
    return "".join(c.choices[0].text for c in chunks if c.choices)


def test_eight_concurrent_streams_share_steps_and_match_one_after_another(client, engine):
    prompts = [f"def handler_{i}(request):" + " pass" * i for i in range(8)]
    alone = [stream_text(client, p) for p in prompts]
    results: list[str | None] = [None] * 8
    gate = threading.Barrier(8)

    def run(i):
        gate.wait()
        results[i] = stream_text(client, prompts[i])

    steps = engine.loop.steps
    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == alone
    assert engine.loop.steps - steps < 8 * 12  # tokens of different requests shared forward passes
    idle(engine)
    assert all_blocks_free(engine)


def test_responses_api_plain_streaming_and_cached_tokens(client):
    kwargs = dict(
        model="any", instructions=SYSTEM, input="What is a tuple?", max_output_tokens=10, temperature=0
    )
    plain = client.responses.create(**kwargs)
    assert plain.object == "response" and plain.status in ("completed", "incomplete")
    assert plain.output[0].type == "message" and plain.output_text
    assert plain.usage.output_tokens <= 10 and plain.usage.input_tokens > 0
    events = list(client.responses.create(**kwargs, stream=True))
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-1] in ("response.completed", "response.incomplete")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    final = events[-1].response
    assert text == plain.output_text == final.output_text
    assert final.usage.input_tokens_details.cached_tokens > 0  # the same prompt as the plain call
    messages = client.responses.create(
        model="any",
        input=[
            {"role": "developer", "content": SYSTEM},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ],
        max_output_tokens=3,
        temperature=0,
    )
    assert messages.usage.output_tokens <= 3
    with pytest.raises(openai.BadRequestError, match="tools is not supported"):
        client.responses.create(model="any", input="hi", tools=[{"type": "web_search"}])
    with pytest.raises(openai.BadRequestError, match="context"):
        client.responses.create(model="any", input="word " * 400)


def test_metrics_are_prometheus_text(base_url, client):
    client.completions.create(model="any", prompt="def metrics():", max_tokens=3, temperature=0)
    client.completions.create(model="any", prompt="def metrics():", max_tokens=3, temperature=0)
    response = httpx.get(f"{base_url}/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    values = {}
    for line in response.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    for name in ("kvcache_num_requests_running", "kvcache_num_requests_waiting", "kvcache_kv_blocks_used"):
        assert name in values
    assert values["kvcache_kv_blocks_free"] > 0 and values["kvcache_preemptions_total"] >= 0
    assert values["kvcache_prefix_cache_hits_total"] > 0
    assert values["kvcache_prefix_cache_queries_total"] >= values["kvcache_prefix_cache_hits_total"]
    assert values["kvcache_time_to_first_token_seconds_count"] >= 2
    assert values["kvcache_inter_token_latency_seconds_count"] >= 4


def test_a_plain_request_whose_client_leaves_is_aborted_and_frees_its_blocks(base_url, engine, monkeypatch):
    idle(engine)
    step, added = engine.runner.step, []

    def slow_step(chunks):  # 50 ms a step: 240 tokens would take 12 s
        time.sleep(0.05)
        return step(chunks)

    def add(seq, original=engine.loop.add):
        original(seq)
        added.append(seq)  # after it is queued: the test then never sees it before the scheduler does

    monkeypatch.setattr(engine.runner, "step", slow_step)
    monkeypatch.setattr(engine.loop, "add", add)
    body = {"prompt": "hello world", "max_tokens": 240, "temperature": 0}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{base_url}/v1/completions", json=body, timeout=httpx.Timeout(5, read=0.5))
    deadline = time.monotonic() + 10  # on a loaded machine the server may submit it after the client left
    while not added:
        assert time.monotonic() < deadline, "the request never reached the engine"
        time.sleep(0.01)
    while not added[0].finished:  # the server notices the departure on its own schedule
        assert time.monotonic() < deadline, (
            f"not aborted: {added[0].status} after {len(added[0].tokens)} tokens"
        )
        time.sleep(0.01)
    idle(engine)
    assert [seq.finish_reason for seq in added] == ["abort"] and len(added[0].tokens) < 100  # not 240 tokens
    assert all_blocks_free(engine)


def test_300_requests_random_lengths_and_disconnects_at_concurrency_16(tmp_path):
    eng = Engine(
        EngineConfig(
            model_path=str(checkpoint("qwen2")), threads=1, max_context=128, block_size=4, kv_blocks=48
        )
    )
    rng = random.Random(11)
    statuses: list[int] = []
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()

    async def one(http: httpx.AsyncClient, i: int) -> None:
        size = rng.choice([1, 3, 10, 30, 60, 200])  # 200 words: over the context, a 400
        body = {
            "prompt": " ".join(rng.choice(words) for _ in range(size)),
            "max_tokens": rng.randint(1, 40),
            "temperature": 0,
        }
        leave = rng.random() < 0.3
        if rng.random() < 0.5:
            body["stream"] = True
            async with http.stream("POST", "/v1/completions", json=body) as response:
                statuses.append(response.status_code)
                lines = 0
                async for _ in response.aiter_lines():
                    lines += 1
                    if leave and lines >= 3:
                        return  # hang up mid-stream
            return
        try:
            response = await asyncio.wait_for(
                http.post("/v1/completions", json=body), timeout=0.05 if leave else 60
            )
            statuses.append(response.status_code)
        except TimeoutError:
            pass  # hung up before the answer

    async def main(url: str) -> None:
        gate = asyncio.Semaphore(16)

        async def limited(http, i):
            async with gate:
                await one(http, i)

        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            await asyncio.gather(*(limited(http, i) for i in range(300)))

    with serve(create_app(eng)) as url:
        asyncio.run(main(url))
        idle(eng)
    assert statuses and all(s < 500 for s in statuses), sorted(set(statuses))
    assert 400 in statuses and 200 in statuses
    assert eng.scheduler.preemptions > 0  # 48 blocks for up to 16 sequences: the pool ran out
    assert all_blocks_free(eng)
    eng.close()
