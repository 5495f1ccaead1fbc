"""API keys never reach stats, files or logs, whatever path a request takes.

One distinctive fake key per provider goes through every path: plain, streamed, upstream
error, proxy errors (413, 502, 504, bad path, unknown prefix), an unparseable body and a
client that hangs up mid-stream; Gemini's key both in ``x-goog-api-key`` (the google-genai
SDK) and in the ``?key=`` query, at the root and under a named upstream, and the
``cachedContents`` calls ``--gemini-auto-cache`` makes with it. Then the stats output, every file under the state dir and every log record
(DEBUG and up) are searched for the keys.
"""

from __future__ import annotations

import logging
import time
import uuid

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from proxy.app import create_app
from proxy.config import ProxyConfig, UpstreamSpec
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import free_port, serve

pytestmark = pytest.mark.e2e

OPENAI_KEY = "sk-LEAKCHECK-" + uuid.uuid4().hex
ANTHROPIC_KEY = "sk-ant-LEAKCHECK-" + uuid.uuid4().hex
GEMINI_KEY = "AIza-LEAKCHECK-" + uuid.uuid4().hex
GEMINI_QUERY_KEY = "AIza-LEAKCHECK-query-" + uuid.uuid4().hex
ADMIN = "admin-LEAKCHECK-" + uuid.uuid4().hex
SDK_LOGGERS = (
    "openai",
    "anthropic",
    "httpx2",
    "google_genai",
    "httpx",
)  # the test's own clients, not the proxy
MESSAGES = [{"role": "system", "content": "Stay on topic. " * 400}, {"role": "user", "content": "hi"}]


def drive(proxy: str, upstream: str, dead: str, state_dir) -> None:
    o = openai.OpenAI(base_url=f"{proxy}/v1", api_key=OPENAI_KEY, max_retries=0)
    a = anthropic.Anthropic(base_url=proxy, api_key=ANTHROPIC_KEY, max_retries=0)
    o.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    list(o.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True))
    o.responses.create(model="gpt-4o", input="hi")
    o.embeddings.create(model="text-embedding-3-small", input="hi")
    o.models.list()
    a.messages.create(
        model="claude-opus-5", max_tokens=4, messages=MESSAGES[1:], system=MESSAGES[0]["content"]
    )
    with a.messages.stream(model="claude-opus-5", max_tokens=4, messages=MESSAGES[1:]) as s:
        list(s)
    with pytest.raises(openai.RateLimitError):
        o.chat.completions.create(
            model="gpt-4o", messages=MESSAGES, extra_headers={"x-emulator-status": "429"}
        )
    with pytest.raises(anthropic.APIStatusError):
        a.messages.create(
            model="c", max_tokens=4, messages=MESSAGES[1:], extra_headers={"x-emulator-delay-ms": "1500"}
        )  # 504
    auth = {"authorization": f"Bearer {OPENAI_KEY}"}
    assert httpx.post(f"{proxy}/v1/chat/completions", content=b"{oops", headers=auth).status_code == 400
    assert httpx.post(f"{proxy}/v1/chat/completions", content=b"x" * 70_000, headers=auth).status_code == 413
    assert httpx.get(f"{proxy}/v1/%2e%2e/x", headers=auth).status_code == 400
    token = uuid.uuid4().hex
    with (
        httpx.Client() as c,
        c.stream(
            "POST",
            f"{proxy}/v1/chat/completions",
            json={"model": "m", "messages": MESSAGES, "stream": True},
            headers={**auth, "x-emulator-hold": token},
        ) as r,
    ):
        next(r.iter_raw())  # then hang up
    httpx.post(f"{upstream}/_emulator/release/{token}")
    drive_gemini(proxy, upstream)
    cfg = ProxyConfig(openai_base=f"{dead}/v1", anthropic_base=dead, gemini_base=dead, state_dir=state_dir)
    with serve(create_app(cfg)) as refused:
        with pytest.raises(openai.InternalServerError):
            openai.OpenAI(base_url=f"{refused}/v1", api_key=OPENAI_KEY, max_retries=0).models.list()


def drive_gemini(proxy: str, upstream: str) -> None:
    config = types.GenerateContentConfig(system_instruction=MESSAGES[0]["content"], max_output_tokens=4)
    for base in (proxy, f"{proxy}/vertex"):
        g = genai.Client(api_key=GEMINI_KEY, http_options=types.HttpOptions(base_url=base))
        g.models.generate_content(model="gemini-2.5-flash", contents="hi", config=config)
        list(g.models.generate_content_stream(model="gemini-2.5-flash", contents="hi", config=config))
        with pytest.raises(genai_errors.APIError):
            g.models.generate_content(
                model="gemini-2.5-flash",
                contents="hi",
                config=types.GenerateContentConfig(
                    http_options=types.HttpOptions(headers={"x-emulator-status": "429"})
                ),
            )
    q = f"key={GEMINI_QUERY_KEY}"
    body = {"contents": [{"parts": [{"text": "hi"}]}]}
    assert (
        httpx.post(f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?{q}", json=body).status_code
        == 200
    )
    assert (
        httpx.post(
            f"{proxy}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&{q}", json=body
        ).status_code
        == 200
    )
    assert (
        httpx.post(
            f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?{q}", content=b"{oops"
        ).status_code
        == 400
    )  # unanalysed
    assert (
        httpx.post(
            f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?{q}", content=b"x" * 70_000
        ).status_code
        == 413
    )
    assert httpx.get(f"{proxy}/v1beta/%2e%2e/models?{q}").status_code == 400
    assert httpx.get(f"{proxy}/nowhere/v1beta/models?{q}").status_code == 404
    assert (
        httpx.post(
            f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent?{q}",
            json=body,
            headers={"x-emulator-delay-ms": "1500"},
        ).status_code
        == 504
    )
    token = uuid.uuid4().hex
    with (
        httpx.Client() as c,
        c.stream(
            "POST",
            f"{proxy}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&{q}",
            json=body,
            headers={"x-emulator-hold": token},
        ) as r,
    ):
        next(r.iter_raw())  # then hang up
    httpx.post(f"{upstream}/_emulator/release/{token}")
    drive_gemini_auto_cache(proxy, upstream)


def drive_gemini_auto_cache(proxy: str, upstream: str) -> None:
    """--gemini-auto-cache: the proxy creates a cache with the client's key (from ?key= and from
    x-goog-api-key), in the background, then rewrites requests to use it."""
    long = {"systemInstruction": {"parts": [{"text": "Stay on topic. " * 700}]}}
    for params, headers in (({"key": GEMINI_QUERY_KEY}, {}), ({}, {"x-goog-api-key": GEMINI_KEY})):
        created = httpx.get(f"{upstream}/_emulator/requests").json()["cached_contents"]["created"]
        for i in range(2):
            body = {**long, "contents": [{"parts": [{"text": f"q{i}"}]}]}
            assert (
                httpx.post(
                    f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent",
                    params=params,
                    headers=headers,
                    json=body,
                ).status_code
                == 200
            )
        deadline = time.monotonic() + 10
        while (
            httpx.get(f"{upstream}/_emulator/requests").json()["cached_contents"]["created"] == created
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        hit = httpx.post(
            f"{proxy}/v1beta/models/gemini-2.5-flash:generateContent",
            params=params,
            headers=headers,
            json={**long, "contents": [{"parts": [{"text": "q9"}]}]},
        )
        assert hit.headers["x-prefixgate-gemini-cache"] == "hit", hit.text


def test_keys_never_written_to_stats_files_or_logs(state_dir, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    dead = f"http://127.0.0.1:{free_port()}"
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            anthropic_base=upstream,
            gemini_base=upstream,
            state_dir=state_dir,
            max_body=65536,
            read_timeout=0.5,
            admin_token=ADMIN,
            upstreams=(UpstreamSpec("vertex", "gemini", upstream),),
            gemini_auto_cache=True,
            gemini_auto_cache_after=2,
        )
        app = create_app(cfg)
        with serve(app) as proxy:
            drive(proxy, upstream, dead, state_dir)
            stats = httpx.get(f"{proxy}/prefixgate/stats", headers={"authorization": f"Bearer {ADMIN}"}).text
            health = httpx.get(f"{proxy}/prefixgate/health").text
    # the bad bodies, the 413s, the bad paths (an unknown prefix is answered, not recorded)
    assert '"requests":' in stats and '"unanalysed":6,' in stats, stats
    secrets = (OPENAI_KEY, ANTHROPIC_KEY, GEMINI_KEY, GEMINI_QUERY_KEY, "LEAKCHECK")
    assert not any(s in stats + health for s in secrets)
    files = [p for p in state_dir.rglob("*") if p.is_file()]
    assert files, "the state dir should hold at least the tenant secret"
    for path in files:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in secrets), f"key found in {path}"
    records = [r for r in caplog.records if not r.name.startswith(SDK_LOGGERS)]
    assert any(r.name.startswith("prefixgate") for r in records), (
        "the proxy logged nothing: the search would prove nothing"
    )
    text = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in records)
    out, err = capfd.readouterr()
    assert not any(s in text for s in secrets)
    assert not any(s in out + err for s in secrets)
