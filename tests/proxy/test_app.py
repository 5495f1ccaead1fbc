"""proxy.app + proxy.handler + proxy.relay against an httpx.MockTransport upstream."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig

USAGE = {"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1536}}
CHAT = {
    "model": "gpt-4o",
    "messages": [{"role": "system", "content": "You are terse. " * 50}, {"role": "user", "content": "hi"}],
}
MESSAGES = {
    "model": "claude-x",
    "max_tokens": 5,
    "system": "Be brief. " * 50,
    "messages": [{"role": "user", "content": "hi"}],
}


class Upstream:
    """Records what reached it; answers by a per-test function."""

    def __init__(self, answer=None):
        self.requests: list[httpx.Request] = []
        self.answer = answer or (lambda req: httpx.Response(200, json={"usage": USAGE}))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answer(request)


@pytest.fixture
def make(state_dir):
    def build(answer=None, **config):
        upstream = Upstream(answer)
        cfg = ProxyConfig(
            openai_base="http://openai.test/v1",
            anthropic_base="http://anthropic.test",
            state_dir=state_dir,
            **config,
        )
        client = TestClient(create_app(cfg, transport=httpx.MockTransport(upstream)))
        return client, upstream

    return build


def stats(client) -> dict:
    return client.get("/prefixgate/stats").json()


def kept_records(client) -> list:
    """The records the app's recorder hands its sinks, as a list that fills up."""
    seen: list = []

    class Keep:
        def handle(self, record):
            seen.append(record)

        async def aclose(self):
            return None

    client.app.state.gate.recorder.add_sink(Keep())
    return seen


def test_plain_body_is_byte_identical_and_usage_is_read_from_a_decoded_copy(make):
    payload = b'{"id":"x",  "usage": ' + json.dumps(USAGE).encode() + b',"z":1.50}'
    packed = gzip.compress(payload)
    client, up = make(
        lambda req: httpx.Response(
            200, content=packed, headers={"content-encoding": "gzip", "content-type": "application/json"}
        )
    )
    with client:
        with client.stream("POST", "/v1/chat/completions", json=CHAT) as r:
            raw = b"".join(r.iter_raw())
        assert raw == packed and r.headers["content-encoding"] == "gzip"
        assert int(r.headers["content-length"]) == len(packed)
        s = stats(client)
    assert (s["input_tokens"], s["cached_tokens"], s["output_tokens"]) == (2000, 1536, 5)


def test_auth_and_other_headers_pass_host_is_rewritten_hop_by_hop_dropped(make):
    client, up = make()
    with client:
        client.post(
            "/v1/chat/completions?api-version=1&x=%2F",
            json=CHAT,
            headers={
                "authorization": "Bearer sk-pass",
                "openai-organization": "org-1",
                "connection": "keep-alive, x-hop",
                "x-hop": "1",
                "host": "evil.example",
            },
        )
    req = up.requests[0]
    assert str(req.url) == "http://openai.test/v1/chat/completions?api-version=1&x=%2F"
    assert req.headers["host"] == "openai.test"
    assert req.headers["authorization"] == "Bearer sk-pass" and req.headers["openai-organization"] == "org-1"
    assert "x-hop" not in req.headers
    assert json.loads(req.content) == CHAT


def test_anthropic_routing_and_prefix_headers_on_the_second_request(make):
    client, up = make(
        lambda req: httpx.Response(
            200, json={"usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 2}}
        )
    )
    with client:
        h = {"x-api-key": "ant-one", "anthropic-version": "2023-06-01"}
        first = client.post("/v1/messages", json=MESSAGES, headers=h)
        second = client.post(
            "/v1/messages", json={**MESSAGES, "messages": [{"role": "user", "content": "other"}]}, headers=h
        )
        other_tenant = client.post("/v1/messages", json=MESSAGES, headers={**h, "x-api-key": "ant-two"})
        s = stats(client)
    assert str(up.requests[0].url) == "http://anthropic.test/v1/messages"
    assert first.headers["x-prefixgate-prefix-segments"] == "0"
    assert second.headers["x-prefixgate-prefix-segments"] == "1"  # the system block
    assert int(second.headers["x-prefixgate-prefix-bytes"]) > 500
    assert other_tenant.headers["x-prefixgate-prefix-segments"] == "0"
    assert len({first.headers["x-prefixgate-request-id"], second.headers["x-prefixgate-request-id"]}) == 2
    assert s["providers"]["anthropic"]["prefix_hits"] == 1
    assert s["providers"]["anthropic"]["cached_tokens"] == 3000


def test_upstream_errors_pass_through_verbatim_and_are_counted(make):
    body = b'{"error": {"message": "slow down", "type": "rate_limit"}}  '
    client, _ = make(
        lambda req: httpx.Response(
            429, content=body, headers={"retry-after": "7", "content-type": "application/json"}
        )
    )
    with client:
        r = client.post("/v1/chat/completions", json=CHAT)
        s = stats(client)
    assert (r.status_code, r.content, r.headers["retry-after"]) == (429, body, "7")
    assert "x-prefixgate-error" not in r.headers
    assert s["errors"] == 1 and s["requests"] == 1


def test_unparseable_body_is_forwarded_untouched_and_counted(make):
    client, up = make(lambda req: httpx.Response(400, json={"error": {"message": "bad json"}}))
    raw = b'{"model": "gpt-4o", "messages": [ oops'
    with client:
        r = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
        s = stats(client)
    assert up.requests[0].content == raw
    assert r.status_code == 400 and r.headers["x-prefixgate-prefix-segments"] == "0"
    assert s["unanalysed"] == 1 and s["requests"] == 1


def test_body_over_max_body_is_413_without_reaching_upstream(make):
    client, up = make(max_body=1000)
    with client:
        by_length = client.post("/v1/chat/completions", content=b"x" * 1001)
        chunked = client.post("/v1/messages", content=iter([b"y" * 600, b"y" * 600]))
        fits = client.post("/v1/chat/completions", content=b"z" * 1000)
        s = stats(client)
    assert by_length.status_code == 413 and by_length.json()["error"]["code"] == "body_too_large"
    assert chunked.status_code == 413 and chunked.json()["error"]["type"] == "request_too_large"
    assert chunked.json()["type"] == "error"
    assert fits.status_code == 200 and len(up.requests) == 1
    assert s["errors"] == 2 and s["requests"] == 3


@pytest.mark.parametrize(
    "exc, status, openai_type, anthropic_type",
    [
        (httpx.ConnectError("refused"), 502, "api_error", "api_error"),
        (httpx.ReadTimeout("slow"), 504, "timeout", "timeout_error"),
        (httpx.ConnectTimeout("slow"), 504, "timeout", "timeout_error"),
        (httpx.RemoteProtocolError("junk"), 502, "api_error", "api_error"),
    ],
)
def test_transport_failures_become_provider_shaped_errors(make, exc, status, openai_type, anthropic_type):
    def fail(req):
        raise exc

    client, _ = make(fail)
    with client:
        o = client.post("/v1/chat/completions", json=CHAT)
        a = client.post("/v1/messages", json=MESSAGES, headers={"anthropic-version": "2023-06-01"})
        s = stats(client)
    assert (
        o.status_code == status
        and o.json()["error"]["type"] == openai_type
        and o.json()["error"]["message"].startswith("prefixgate:")
    )
    assert a.status_code == status and a.json() == {
        "type": "error",
        "error": {"type": anthropic_type, "message": a.json()["error"]["message"]},
    }
    assert o.headers["x-prefixgate-error"] == a.headers["x-prefixgate-error"]
    assert o.headers["x-prefixgate-prefix-segments"] == "0" and "x-prefixgate-request-id" in a.headers
    assert s["errors"] == 2


def _sse_answer(req: httpx.Request) -> httpx.Response:
    body = json.loads(req.content)
    with_usage = (body.get("stream_options") or {}).get("include_usage") is True
    extra = {"usage": None} if with_usage else {}
    events = [
        {"id": "c1", "choices": [{"index": 0, "delta": {"content": "he"}}], **extra},
        {
            "id": "c1",
            "choices": [{"index": 0, "delta": {"content": "llo"}, "finish_reason": "stop"}],
            **extra,
        },
    ]
    if with_usage:
        events.append({"id": "c1", "choices": [], "usage": USAGE})
    data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    return httpx.Response(200, content=data, headers={"content-type": "text/event-stream"})


def test_stream_usage_is_asked_for_and_its_chunk_removed(make):
    client, up = make(_sse_answer)
    with client:
        r = client.post("/v1/chat/completions", json={**CHAT, "stream": True})
        s = stats(client)
    assert json.loads(up.requests[0].content)["stream_options"] == {"include_usage": True}
    assert up.requests[0].headers["accept-encoding"] == "identity"
    assert b'"choices": []' not in r.content and b"[DONE]" in r.content
    assert r.content.count(b"data: ") == 3
    assert (s["input_tokens"], s["cached_tokens"]) == (2000, 1536)


def test_stream_usage_the_client_asked_for_stays(make):
    client, up = make(_sse_answer)
    body = json.dumps({**CHAT, "stream": True, "stream_options": {"include_usage": True}}).encode()
    with client:
        r = client.post("/v1/chat/completions", content=body)
        s = stats(client)
    assert up.requests[0].content == body
    assert r.content == _sse_answer(up.requests[0]).content
    assert s["output_tokens"] == 5


def test_stats_guarded_by_admin_token_health_open(make):
    client, _ = make(admin_token="s3cret")
    with client:
        assert client.get("/prefixgate/stats").status_code == 401
        assert client.get("/prefixgate/stats", headers={"authorization": "Bearer nope"}).status_code == 401
        assert (
            client.get("/prefixgate/stats", headers={"authorization": "Bearer s3cret"}).json()["requests"]
            == 0
        )
        health = client.get("/prefixgate/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_admin_pages_have_no_way_around_the_token(make):
    client, _ = make(admin_token="s3cret")
    data_paths = [
        "/prefixgate/stats",
        "/prefixgate/metrics",
        "/prefixgate/api/summary",
        "/prefixgate/dashboard",
    ]
    tricks = [
        *data_paths,
        "/prefixgate/%73tats",  # an escaped letter: Starlette routes the decoded path
        "/prefixgate/stats/",
        "/prefixgate/health/%2e%2e/stats",
        "/prefixgate/static/%2e%2e/stats",  # under the open static prefix, but routes nowhere
        "/prefixgate/static/..%2fstats",
        "/prefixgate//stats",
        "/PREFIXGATE/stats",
    ]
    with client:
        codes = {
            (m, p): client.request(m, p, follow_redirects=False).status_code
            for p in tricks
            for m in ("GET", "HEAD")
        }
        granted = {
            p: client.get(p, headers={"authorization": "Bearer s3cret"}).status_code for p in data_paths
        }
    assert {k: c for k, c in codes.items() if c not in (401, 404)} == {}
    assert {p for (_, p), c in codes.items() if c == 401} >= set(data_paths) | {"/prefixgate/%73tats"}
    assert granted == dict.fromkeys(data_paths, 200)


def test_only_configured_bases_are_contacted(make):
    client, up = make()
    with client:
        codes = [
            client.post("/v1/chat/completions", json=CHAT, headers={"host": "evil.example"}).status_code,
            client.get("/v1/..%2f..%2fetc").status_code,
            client.get("/v1/%2e%2e/admin").status_code,
            client.get("/v1//evil.example/x").status_code,
            client.get("/v2/models").status_code,
            client.get("/v1/models?next=http://evil.example/").status_code,
        ]
        s = stats(client)
    assert codes == [200, 400, 400, 400, 404, 200]
    assert {r.url.host for r in up.requests} == {"openai.test"}
    assert s["requests"] == 5  # refused paths under /v1 are recorded too; /v2 is no prefix the proxy serves


def test_an_escaped_spelling_of_a_route_is_still_counted(make):
    # "%63hat" is "chat": the upstream answers it as chat/completions, so its usage counts.
    client, up = make()
    with client:
        r = client.post("/v1/%63hat/completions", json=CHAT)
        s = stats(client)
    assert r.status_code == 200 and up.requests[0].url.raw_path == b"/v1/chat/completions"
    assert (s["requests"], s["input_tokens"], s["cached_tokens"]) == (1, 2000, 1536)


def test_a_refused_path_is_recorded_as_sent_never_decoded_into_log_lines(make):
    client, _ = make()
    seen = kept_records(client)
    with client:
        assert client.get("/v1/%2e%2e/%1b%5b2J%09x").status_code == 400
    # Before: the record's route was the decoded path: raw terminal escapes and tabs in the
    # access log and the ledger.
    assert [r.route for r in seen] == ["/v1/%2e%2e/%1b%5b2J%09x"]


def test_a_model_name_cannot_forge_access_log_lines(make, caplog):
    client, _ = make()
    caplog.set_level("INFO", logger="prefixgate.access")
    with client:
        client.post("/v1/chat/completions", json={**CHAT, "model": "m\nFAKE 200 admin"})
    lines = [r.getMessage() for r in caplog.records if r.name == "prefixgate.access"]
    assert len(lines) == 1 and "\n" not in lines[0] and "model=m\\nFAKE" in lines[0]


def test_a_failing_rewrite_forwards_the_body_unchanged_and_keeps_the_record(make, monkeypatch, caplog):
    # Before: an exception in --rewrite escaped the handler: a 500 and no record at all.
    import proxy.request_rewrite

    def broken(*args, **kwargs):
        raise KeyError("rewrite bug")

    monkeypatch.setattr(proxy.request_rewrite, "rewrite_request", broken)
    client, up = make(rewrite=True)
    body = json.dumps(MESSAGES).encode()
    with client:
        r = client.post("/v1/messages", content=body, headers={"anthropic-version": "2023-06-01"})
        s = stats(client)
    assert r.status_code == 200 and up.requests[0].content == body
    assert r.headers["x-prefixgate-rewrites"] == "skipped-error"  # forwarded as it came, and counted
    assert s["requests"] == 1 and s["errors"] == 0
    assert "rewrite failed" in caplog.text


def test_a_store_failing_to_close_still_lets_the_ledger_flush(state_dir, tmp_path):
    # Before: the lifespan closed upstream, store, recorder in a row, so an exception from
    # the store's aclose skipped the ledger's final flush and lost its queued rows.
    import sqlite3

    from proxy.store import MemoryStore

    class StuckStore(MemoryStore):
        async def aclose(self):
            raise ConnectionError("store gone")

    ledger = tmp_path / "ledger.sqlite"
    cfg = ProxyConfig(
        openai_base="http://openai.test/v1",
        anthropic_base="http://anthropic.test",
        state_dir=state_dir,
        ledger=str(ledger),
    )
    app = create_app(cfg, transport=httpx.MockTransport(Upstream()), store=StuckStore())
    with pytest.raises(ConnectionError):
        with TestClient(app) as client:
            assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
    assert sqlite3.connect(ledger).execute("SELECT COUNT(*) FROM requests").fetchone() == (1,)


def test_a_failing_sink_never_breaks_a_request(make, caplog):
    client, _ = make()

    class Boom:
        def handle(self, record):
            raise RuntimeError("sink down")

        async def aclose(self):
            return None

    with client:
        client.app.state.gate.recorder.add_sink(Boom())
        r = client.post("/v1/chat/completions", json=CHAT)
        s = stats(client)
    assert r.status_code == 200 and s["requests"] == 1


class _BreaksMidway(httpx.AsyncByteStream):
    def __init__(self, exc):
        self.exc = exc
        self.closed = False

    async def __aiter__(self):
        yield b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'
        raise self.exc

    async def aclose(self):
        self.closed = True


@pytest.mark.parametrize(
    "exc, kind",
    [
        (httpx.ReadTimeout("slow"), "upstream_timeout"),
        (httpx.RemoteProtocolError("cut"), "upstream_read_error"),
    ],
)
def test_upstream_failing_mid_stream_is_recorded_and_the_client_sees_a_cut(make, exc, kind):
    stream = _BreaksMidway(exc)
    client, _ = make(
        lambda req: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)
    )
    seen = kept_records(client)
    with client:
        with pytest.raises(RuntimeError, match="upstream failed mid-response"):
            client.post(
                "/v1/chat/completions",
                json={**CHAT, "stream": True, "stream_options": {"include_usage": True}},
            )
    assert stream.closed
    assert [(r.status, r.error) for r in seen] == [(200, kind)]


def test_a_dead_redis_store_never_fails_a_request(make, caplog):
    from tests.support.servers import free_port

    client, up = make(store=f"redis://127.0.0.1:{free_port()}/0")
    with client:
        first = client.post("/v1/chat/completions", json=CHAT)
        second = client.post("/v1/chat/completions", json=CHAT)
        health = client.get("/prefixgate/health")
        s = stats(client)
    assert first.status_code == second.status_code == 200
    for r in (first, second):  # unknown, never "0": a dead store is not a cache miss
        assert (
            r.headers["x-prefixgate-prefix-segments"] == r.headers["x-prefixgate-prefix-bytes"] == "unknown"
        )
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    body = health.json()  # the cause: no shared tenant secret until Redis answers, and the last error seen
    assert body["breaker"]["state"] == "open" and body["breaker"]["last_error"] in (
        "ConnectionError",
        "ConnectionRefusedError",
    )
    assert "Redis did not answer at start" in body["store_error"]
    assert s["requests"] == 2 and s["errors"] == 0
    assert s["prefix_hits"] == 0 and s["prefix_unknown"] == 2
    assert caplog.text.count("prefix store failed") == 1  # once when the breaker opens, not per request


def test_usage_counted_once_when_generated_not_when_retrieved(make):
    client, _ = make(
        lambda req: httpx.Response(
            200, json={"id": "resp_1", "usage": {"input_tokens": 50, "output_tokens": 5}}
        )
    )
    with client:
        client.post("/v1/responses", json={"model": "gpt-4o", "input": "hi"})
        client.get("/v1/responses/resp_1")
        s = stats(client)
    assert s["requests"] == 2 and (s["input_tokens"], s["output_tokens"]) == (50, 5)


def test_big_bodies_are_analysed_too(make):
    client, up = make()
    big = {
        **CHAT,
        "messages": [{"role": "system", "content": "long " * 300_000}, {"role": "user", "content": "q"}],
    }
    with client:
        first = client.post("/v1/chat/completions", json=big)
        second = client.post("/v1/chat/completions", json=big)
    assert first.status_code == second.status_code == 200
    assert second.headers["x-prefixgate-prefix-segments"] == "2"
    assert int(second.headers["x-prefixgate-prefix-bytes"]) > 1_500_000


ABSURD_USAGE = b'{"usage":{"prompt_tokens":2000,"completion_tokens":9223372036854775808}}'


def test_an_absurd_usage_number_stops_no_accounting(make, state_dir):
    """One upstream's completion_tokens past 64 bits: clamped and flagged, the next request's
    row still lands, /prefixgate/stats answers, /prefixgate/health shows the ledger."""
    import sqlite3

    from analyzer.usage import MAX_TOKENS

    answers = iter([httpx.Response(200, content=ABSURD_USAGE, headers={"content-type": "application/json"})])
    client, _ = make(lambda req: next(answers, None) or httpx.Response(200, json={"usage": USAGE}))
    with client:
        first = client.post("/v1/chat/completions", json=CHAT)
        second = client.post("/v1/chat/completions", json=CHAT)
        s = client.get("/prefixgate/stats")
        metrics = client.get("/prefixgate/metrics").text
        summary = client.get("/prefixgate/api/summary")
        health = client.get("/prefixgate/health")
    assert first.status_code == second.status_code == 200
    assert s.status_code == 200 and s.json()["requests"] == 2
    assert s.json()["output_tokens"] == MAX_TOKENS + 5 and s.json()["unpriced"] == 1  # clamped: priced null
    assert summary.status_code == 200 and summary.json()["output_tokens"] == MAX_TOKENS + 5
    assert (
        "prefixgate_ledger_flagged_total 1.0" in metrics and "prefixgate_ledger_failures_total 0.0" in metrics
    )
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert health.json()["ledger"] == {
        "ok": True,
        "writer_alive": True,
        "written": 2,
        "failures": 0,
        "dropped": 0,
        "unwritable": 0,
        "flagged": 1,
        "queued": 0,
    }
    conn = sqlite3.connect(state_dir / "ledger.sqlite")
    got = conn.execute("SELECT output_tokens, cost_usd, flags FROM requests ORDER BY id").fetchall()
    assert got[0] == (MAX_TOKENS, None, "usage.completion_tokens:too_large")
    assert got[1][0] == 5 and got[1][1] is not None and got[1][2] is None


def test_stats_answers_even_with_a_number_orjson_refuses(make):
    client, _ = make()
    with client:
        client.app.state.gate.stats.total.output_tokens = 2**70  # however it got there
        s = client.get("/prefixgate/stats")
    assert s.status_code == 200 and s.json()["output_tokens"] == 2**70


def test_health_is_degraded_while_the_ledger_writer_is_not_running(make):
    client, _ = make()
    with client:
        assert client.get("/prefixgate/health").json()["ledger"]["writer_alive"] is True
        client.app.state.gate.money.ledger.close_sync()  # the writer thread ends
        health = client.get("/prefixgate/health")
        assert client.post("/v1/chat/completions", json=CHAT).status_code == 200  # requests go on
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert health.json()["ledger"]["writer_alive"] is False


def test_gemini_errors_in_googles_shape_and_unknown_prefixes_unrecorded(make):
    def answer(request):
        if b"boom" in request.content:
            raise httpx.ConnectError("refused")
        return httpx.Response(
            200,
            json={
                "candidates": [],
                "usageMetadata": {
                    "promptTokenCount": 3000,
                    "cachedContentTokenCount": 2048,
                    "candidatesTokenCount": 4,
                },
            },
        )

    client, up = make(answer, max_body=4096)
    seen = kept_records(client)
    route = "/v1beta/models/gemini-2.5-flash:generateContent"
    with client:
        ok = client.post(f"{route}?key=AIza-x", json={"contents": [{"parts": [{"text": "hi"}]}]})
        big = client.post(route, content=b"x" * 5000, headers={"x-goog-api-key": "AIza-x"})
        down = client.post(route, json={"contents": [{"parts": [{"text": "boom"}]}]})
        favicon = client.get("/favicon.ico")
        own = client.get("/prefixgate/nothing-here")
        not_json = client.post(
            route, content=b'{"contents": [oops \x00', headers={"x-goog-api-key": "AIza-x"}
        )
    assert (
        ok.status_code == 200
        and str(up.requests[0].url) == f"https://generativelanguage.googleapis.com{route}?key=AIza-x"
    )
    assert (big.status_code, big.json()["error"]["status"], big.headers["x-prefixgate-error"]) == (
        413,
        "INVALID_ARGUMENT",
        "body_too_large",
    )
    assert (down.status_code, down.json()["error"]["status"], down.json()["error"]["code"]) == (
        502,
        "UNAVAILABLE",
        502,
    )
    assert (
        favicon.status_code == 404
        and "unknown path prefix '/favicon.ico'" in favicon.json()["error"]["message"]
    )
    assert favicon.json()["error"]["type"] == "invalid_request_error" and own.status_code == 404
    assert (
        not_json.status_code == 200 and up.requests[-1].content == b'{"contents": [oops \x00'
    )  # forwarded untouched
    assert [(r.provider, r.upstream, r.status, r.analysed) for r in seen] == [
        ("gemini", "gemini", 200, True),
        ("gemini", "gemini", 413, False),
        ("gemini", "gemini", 502, True),
        ("gemini", "gemini", 200, False),
    ]
    assert client.app.state.gate.stats.to_json()["unanalysed"] == 2  # the 413 and the body that is not JSON
    assert (
        seen[0].usage.cached_tokens == 2048
        and seen[0].model == "gemini-2.5-flash"
        and seen[0].tenant == seen[1].tenant != "anonymous"
    )


def test_named_upstreams_route_record_and_rewrite_only_where_their_rules_are_the_protocols(make):
    from proxy.config import UpstreamSpec

    client, up = make(
        rewrite="safe",
        upstreams=(
            UpstreamSpec("deepseek", "openai", "http://ds.test/v1", rules="deepseek"),
            UpstreamSpec("groq", "openai", "http://groq.test/openai/v1"),
        ),
    )
    seen = kept_records(client)
    raw = json.dumps(CHAT).encode()
    with client:
        ds = client.post("/deepseek/v1/chat/completions", content=raw, headers={"authorization": "Bearer k"})
        groq = client.post("/groq/v1/chat/completions", content=raw, headers={"authorization": "Bearer k"})
        wrong = client.post("/deepseek/chat/completions", content=raw)
    assert ds.status_code == groq.status_code == 200 and wrong.status_code == 404
    assert [str(r.url) for r in up.requests] == [
        "http://ds.test/v1/chat/completions",
        "http://groq.test/openai/v1/chat/completions",
    ]
    assert (
        up.requests[0].content == raw and "x-prefixgate-rewrites" not in ds.headers
    )  # DeepSeek's body as sent
    assert b"prompt_cache_key" in up.requests[1].content  # OpenAI's rules: the safe rewrite applies
    assert [(r.upstream, r.route, r.status) for r in seen] == [
        ("deepseek", "/deepseek/v1/chat/completions", 200),
        ("groq", "/groq/v1/chat/completions", 200),
        ("deepseek", "/deepseek/chat/completions", 404),
    ]
    assert "/deepseek/v1/..." in wrong.json()["error"]["message"]
