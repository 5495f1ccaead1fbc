"""The engine's OpenAI-compatible server, end to end: the official openai SDK against a real uvicorn."""

from __future__ import annotations

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
    return Engine(
        EngineConfig(model_path=str(checkpoint("llama3")), threads=1, max_context=256, block_size=4)
    )


@pytest.fixture(scope="module")
def base_url(engine):
    with serve(create_app(engine)) as url:
        yield url


@pytest.fixture
def client(base_url):
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="not-needed", max_retries=0)


def messages(question: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def test_chat_completion_reports_cached_prefix_tokens_on_the_second_request(client, engine):
    first = client.chat.completions.create(
        model="any", messages=messages("What is a list?"), max_tokens=8, temperature=0
    )
    second = client.chat.completions.create(
        model="any", messages=messages("What is a dict?"), max_tokens=8, temperature=0
    )
    prompt_len = len(engine.tokenizer.encode_chat(messages("What is a dict?")))
    assert second.usage.prompt_tokens == prompt_len
    assert 1 <= first.usage.completion_tokens <= 8
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert 0 < cached < prompt_len and cached % 4 == 0  # whole blocks of the shared system prompt
    assert second.choices[0].finish_reason in ("length", "stop")


def test_streaming_equals_plain_and_ends_with_usage(client):
    kwargs = dict(model="any", messages=messages("Explain tuples."), max_tokens=10, temperature=0)
    plain = client.chat.completions.create(**kwargs)
    chunks = list(
        client.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens > 0  # same prompt as the plain call
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == plain.choices[0].finish_reason


def test_completions_with_text_and_stop_string(client):
    free = client.completions.create(model="any", prompt="def parse(text):", max_tokens=12, temperature=0)
    text = free.choices[0].text
    assert free.usage.completion_tokens == 12 and free.choices[0].finish_reason == "length"
    # A stop string from the second half of the greedy text: the same request must end right before it.
    stop = next(
        text[i : i + 2]
        for i in range(len(text) // 2, len(text) - 1)
        if text[i : i + 2].strip() == text[i : i + 2]
    )
    stopped = client.completions.create(
        model="any", prompt="def parse(text):", max_tokens=12, temperature=0, stop=[stop]
    )
    assert stopped.choices[0].text == text[: text.index(stop)]
    assert stopped.choices[0].finish_reason == "stop"


def test_prompt_longer_than_context_is_a_clear_400(client):
    with pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="any", prompt="word " * 400, max_tokens=4)
    assert info.value.status_code == 400
    assert "context is 256 tokens" in info.value.message
    with pytest.raises(openai.BadRequestError, match="max_tokens asks for 250 more"):
        client.chat.completions.create(model="any", messages=messages("hi"), max_tokens=250)


def test_malformed_bodies_get_openai_style_errors(base_url):
    bad_json = httpx.post(
        f"{base_url}/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 400 and "not valid JSON" in bad_json.json()["error"]["message"]
    no_messages = httpx.post(f"{base_url}/v1/chat/completions", json={"model": "x"})
    assert no_messages.status_code == 400 and no_messages.json()["error"]["param"] == "messages"
    bad_temp = httpx.post(f"{base_url}/v1/completions", json={"prompt": "x", "temperature": 9})
    assert bad_temp.status_code == 400 and "temperature" in bad_temp.json()["error"]["message"]
    too_long = httpx.post(f"{base_url}/v1/completions", json={"prompt": "word " * 400})
    assert too_long.status_code == 400
    assert too_long.json()["error"] | {"message": None} == {
        "message": None,
        "type": "invalid_request_error",
        "param": "prompt",
        "code": "context_length_exceeded",
    }
    # Routes and methods the engine does not serve answer in the same JSON shape, not Starlette's plain text.
    missing = httpx.post(f"{base_url}/v1/embeddings", json={"input": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert "/v1/embeddings" in missing.json()["error"]["message"]
    assert (
        "this engine serves" in missing.json()["error"]["message"]
        and "POST /v1/chat/completions" in missing.json()["error"]["message"]
    )
    wrong_method = httpx.get(f"{base_url}/v1/chat/completions")
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["type"] == "invalid_request_error"
    assert wrong_method.headers["allow"] == "POST"


def test_client_leaving_mid_stream_frees_the_model_and_its_blocks(base_url, engine):
    free_before = engine.pool.manager.num_free
    body = {"prompt": "hello world", "max_tokens": 200, "stream": True, "temperature": 0}
    with httpx.Client() as http, http.stream("POST", f"{base_url}/v1/completions", json=body) as response:
        for index, _ in enumerate(response.iter_lines()):
            if index >= 3:
                break  # hang up after a few chunks
    after = httpx.post(f"{base_url}/v1/completions", json={"prompt": "hello", "max_tokens": 3}, timeout=30)
    assert after.status_code == 200 and after.json()["usage"]["completion_tokens"] == 3
    assert not engine.lock.locked() and engine.pool.manager.num_free == free_before


def test_a_failure_inside_the_model_is_openai_json_and_frees_the_model(base_url, engine, monkeypatch):
    free_before = engine.pool.manager.num_free

    def broken(*args, **kwargs):
        raise RuntimeError("simulated kernel failure")

    monkeypatch.setattr(engine.model, "forward", broken)
    body = {"prompt": "hello there", "max_tokens": 3}
    plain = httpx.post(f"{base_url}/v1/completions", json=body, timeout=30)
    assert plain.status_code == 500 and plain.json()["error"] == {
        "message": "internal error: RuntimeError: simulated kernel failure",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    streamed = httpx.post(f"{base_url}/v1/completions", json={**body, "stream": True}, timeout=30)
    events = [line.removeprefix("data: ") for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and "simulated kernel failure" in events[-2]
    assert not engine.lock.locked() and engine.pool.manager.num_free == free_before


def test_models_lists_the_loaded_model(client):
    models = client.models.list().data
    assert [m.id for m in models] == ["llama3"]


def test_prefixgate_local_command_serves_a_checkpoint(tmp_path):
    import subprocess
    import sys
    import time

    from tests.support.servers import free_port

    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "proxy.cli",
        "local",
        "--model",
        str(checkpoint("qwen2")),
        "--port",
        str(port),
        "--threads",
        "1",
        "--max-context",
        "128",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "prefixgate local did not start within 60 s"
            time.sleep(0.2)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        reply = client.chat.completions.create(
            model="qwen2", messages=messages("hi"), max_tokens=3, temperature=0
        )
        assert reply.usage.completion_tokens <= 3 and reply.model == "qwen2"
    finally:
        proc.terminate()
        output = proc.communicate(timeout=10)[0]
    assert "loaded qwen2: qwen2, 2 layers, 4 heads / 1 KV heads" in output
