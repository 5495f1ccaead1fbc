"""The emulator's test controls (status, delay, hold/release, chunks), errors and CLI."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import anthropic
import httpx
import openai
import pytest
from click.testing import CliRunner

from proxy.emulator import EmulatorConfig, create_app
from proxy.emulator.cli import emulator_command
from tests.support.servers import free_port, serve

pytestmark = pytest.mark.e2e

KEY = "sk-secret-never-echoed-7f3a9"
MSG = [{"role": "user", "content": "ping"}]


@pytest.fixture(scope="module")
def url():
    with serve(create_app()) as base:
        yield base


def test_forced_status_in_each_provider_shape(url):
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
    with pytest.raises(openai.RateLimitError) as err:
        client.chat.completions.create(model="m", messages=MSG, extra_headers={"x-emulator-status": "429"})
    assert err.value.body["type"] == "requests" and err.value.body["code"] == "rate_limit_exceeded"
    assert set(err.value.body) == {"message", "type", "param", "code"}
    aclient = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as aerr:
        aclient.messages.create(
            model="m", max_tokens=5, messages=MSG, extra_headers={"x-emulator-status": "529"}
        )
    assert aerr.value.status_code == 529
    assert aerr.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": aerr.value.body["error"]["message"]},
    }


def test_bad_controls_bad_json_and_unknown_routes(url):
    with httpx.Client(base_url=url) as http:
        bad = http.post("/v1/chat/completions", headers={"x-emulator-chunks": "lots"}, json={})
        assert bad.status_code == 400 and "x-emulator-chunks" in bad.json()["error"]["message"]
        broken = http.post(
            "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert broken.status_code == 400 and broken.json()["error"]["type"] == "invalid_request_error"
        ant = http.post("/v1/messages", content=b"[1, 2]", headers={"anthropic-version": "2023-06-01"})
        assert ant.status_code == 400 and ant.json()["type"] == "error"
        missing = http.post("/v1/chat/completions", json={"messages": MSG})
        assert missing.status_code == 400 and missing.json()["error"]["param"] == "model"
        assert http.get("/v1/nowhere").status_code == 404


def test_delay(url):
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
    start = time.monotonic()
    client.chat.completions.create(model="m", messages=MSG, extra_headers={"x-emulator-delay-ms": "150"})
    assert time.monotonic() - start >= 0.15


def test_chunks_and_request_counter(url):
    with httpx.Client(base_url=url) as http:
        before = http.get("/_emulator/requests").json()["requests"]
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
    chunks = list(
        client.chat.completions.create(
            model="m", messages=MSG, max_tokens=20, stream=True, extra_headers={"x-emulator-chunks": "7"}
        )
    )
    content = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content) == 7 and sum(len(c.choices[0].delta.content) for c in content) == 80
    with httpx.Client(base_url=url) as http:
        after = http.get("/_emulator/requests").json()
    assert after["requests"] == before + 1 and after["by_route"]["/v1/chat/completions"] >= 1


def test_hold_keeps_the_stream_after_the_first_event_until_released(url):
    client = anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0)
    seen: list[str] = []
    done = threading.Event()

    def consume():
        for event in client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=8,
            messages=MSG,
            stream=True,
            extra_headers={"x-emulator-hold": "tok-1"},
        ):
            seen.append(event.type)
        done.set()

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    assert seen == ["message_start"] and not done.is_set()
    with httpx.Client(base_url=url) as http:
        assert http.post("/_emulator/release/tok-1").json() == {"released": "tok-1"}
    assert done.wait(5)
    assert seen[-1] == "message_stop"


def test_api_key_is_never_echoed_and_can_be_required():
    with serve(create_app(EmulatorConfig(require_api_key=True))) as base:
        with httpx.Client(base_url=base) as http:
            anon = http.post("/v1/chat/completions", json={"model": "m", "messages": MSG})
            assert anon.status_code == 401 and anon.json()["error"]["code"] == "invalid_api_key"
            for path, headers in (
                ("/v1/chat/completions", {"authorization": f"Bearer {KEY}"}),
                ("/v1/messages", {"x-api-key": KEY, "anthropic-version": "2023-06-01"}),
            ):
                for stream in (False, True):
                    r = http.post(
                        path,
                        headers=headers,
                        json={"model": "m", "max_tokens": 4, "messages": MSG, "stream": stream},
                    )
                    assert r.status_code == 200
                    assert KEY not in r.text and KEY not in str(r.headers)
            assert KEY not in http.get("/_emulator/requests").text


def test_cli_help_and_serving():
    result = CliRunner().invoke(emulator_command, ["--help"])
    assert result.exit_code == 0 and "--port" in result.output
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "emulator", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["object"] == "list"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
