"""End to end for ``--rewrite safe`` on GPT-5.6: the official ``openai`` SDK → prefixgate → emulator.

GPT-5.6 caches only at breakpoints. The codex pattern (a 9,000-token developer prompt and tools
that never change, one new user message per call) reads nothing with only the implicit
breakpoint; the proxy's markers make it read what a self-marking app reads, on Chat Completions
and Responses, plain and streaming. An older model (gpt-5.5), which the emulator answers with a
400 when a 5.6 parameter appears, never gets one. Named upstreams with ``xai`` / ``mistral``
rules get their routing hints.
"""

from __future__ import annotations

import contextlib

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from proxy.app import create_app
from proxy.bench.gpt56_workload import CHAT, RESPONSES, agent_loop, codex
from proxy.config import ProxyConfig, UpstreamSpec
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve
from tests.support.sinks import Keep

pytestmark = pytest.mark.e2e
REQUESTS = 5


@contextlib.contextmanager
def gateway(tmp_path, rewrite: str, upstreams=()):
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            anthropic_base=upstream,
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            rewrite=rewrite,
            upstreams=tuple(upstreams),
        )
        with serve(create_app(cfg)) as proxy:
            yield proxy


def send(
    client: openai.OpenAI, api: str, body: dict, stream: bool, headers: dict | None = None
) -> tuple[int, int, str | None]:
    """(prompt tokens, cached tokens, the x-prefixgate-rewrites header) of one call."""
    extra = {"extra_headers": headers or {}}
    if api == CHAT:
        if not stream:
            raw = client.chat.completions.with_raw_response.create(**body, **extra)
            usage = raw.parse().usage
            return (
                usage.prompt_tokens,
                usage.prompt_tokens_details.cached_tokens,
                raw.headers.get("x-prefixgate-rewrites"),
            )
        with client.chat.completions.with_streaming_response.create(
            **body, stream=True, stream_options={"include_usage": True}, **extra
        ) as raw:
            usage = [c.usage for c in raw.parse() if c.usage is not None][-1]
            return (
                usage.prompt_tokens,
                usage.prompt_tokens_details.cached_tokens,
                raw.headers.get("x-prefixgate-rewrites"),
            )
    if not stream:
        raw = client.responses.with_raw_response.create(**body, **extra)
        usage = raw.parse().usage
        return (
            usage.input_tokens,
            usage.input_tokens_details.cached_tokens,
            raw.headers.get("x-prefixgate-rewrites"),
        )
    with client.responses.with_streaming_response.create(**body, stream=True, **extra) as raw:
        done = [e for e in raw.parse() if e.type == "response.completed"][-1]
        usage = done.response.usage
        return (
            usage.input_tokens,
            usage.input_tokens_details.cached_tokens,
            raw.headers.get("x-prefixgate-rewrites"),
        )


def share(
    proxy: str, key: str, api: str, bodies, stream: bool, headers: dict | None = None
) -> tuple[float, list]:
    client = openai.OpenAI(base_url=f"{proxy}/v1", api_key=key, max_retries=0)
    prompt = cached = 0
    applied = []
    for body in bodies:
        p, c, a = send(client, api, body, stream, headers)
        prompt, cached = prompt + p, cached + c
        applied.append(a)
    return cached / prompt, applied


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", [CHAT, RESPONSES])
def test_safe_makes_the_codex_pattern_read_what_a_self_marking_app_reads(tmp_path, api, stream):
    with gateway(tmp_path, "safe") as proxy:
        ideal, _ = share(proxy, f"sk-ideal-{api}-{stream}", api, codex(api, REQUESTS, marked=True), stream)
        safe, applied = share(proxy, f"sk-safe-{api}-{stream}", api, codex(api, REQUESTS), stream)
        off, off_applied = share(
            proxy,
            f"sk-off-{api}-{stream}",
            api,
            codex(api, REQUESTS),
            stream,
            {"x-prefixgate-rewrite": "off"},
        )
    assert ideal > 0.75  # every call after the first reads the 9,000-token head
    assert safe >= 0.9 * ideal
    assert all("add-openai-breakpoints" in a for a in applied)
    if api == RESPONSES:
        assert all("instructions-as-developer" in a for a in applied)
    assert (
        off == 0.0 and off_applied == [None] * REQUESTS
    )  # only the implicit breakpoint, at the changing user message


@pytest.mark.parametrize("api", [CHAT, RESPONSES])
def test_safe_is_never_below_off_on_an_agent_loop(tmp_path, api):
    with gateway(tmp_path, "safe") as proxy:
        safe, _ = share(proxy, f"sk-agent-safe-{api}", api, agent_loop(api, 5, volatile=False), stream=False)
        off, _ = share(
            proxy,
            f"sk-agent-off-{api}",
            api,
            agent_loop(api, 5, volatile=False),
            stream=False,
            headers={"x-prefixgate-rewrite": "off"},
        )
    assert safe >= off > 0.5  # the implicit breakpoint carries the conversation; the markers lose none of it


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", [CHAT, RESPONSES])
def test_an_older_model_never_gets_a_gpt56_parameter(tmp_path, api, stream):
    with gateway(tmp_path, "safe") as proxy:
        # the emulator answers a 400 (unsupported_parameter) if a marker or prompt_cache_options reaches gpt-5.5
        _, applied = share(proxy, f"sk-old-{api}-{stream}", api, codex(api, 3, model="gpt-5.5"), stream)
        _, agent = share(
            proxy, f"sk-old-agent-{api}-{stream}", api, agent_loop(api, 3, model="gpt-5.5"), stream
        )
        client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-old-check", max_retries=0)
        with pytest.raises(openai.BadRequestError):  # the check is live: a self-marked body is refused
            send(client, api, next(codex(api, 1, marked=True, model="gpt-5.5")), stream)
    assert all(
        a and "prompt-cache-key" in a and "openai-breakpoints" not in a and "instructions" not in a
        for a in applied + agent
    )


class Recorder:
    """An OpenAI-style upstream that records what reached it."""

    def __init__(self):
        self.seen: list[
            tuple[str, dict[str, list[str]], dict]
        ] = []  # (path, header name → every value, body)

    @staticmethod
    def headers(request: Request) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, value in request.headers.items():
            out.setdefault(name, []).append(value)
        return out

    def app(self) -> Starlette:
        async def chat(request: Request):
            self.seen.append((request.url.path, self.headers(request), await request.json()))
            return JSONResponse(
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "ok"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                }
            )

        async def responses(request: Request):
            self.seen.append((request.url.path, self.headers(request), await request.json()))
            return JSONResponse(
                {
                    "id": "r1",
                    "object": "response",
                    "created_at": 1,
                    "model": "m",
                    "status": "completed",
                    "output": [],
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                    "usage": {
                        "input_tokens": 10,
                        "output_tokens": 1,
                        "total_tokens": 11,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens_details": {"reasoning_tokens": 0},
                    },
                }
            )

        return Starlette(
            routes=[
                Route("/v1/chat/completions", chat, methods=["POST"]),
                Route("/v1/responses", responses, methods=["POST"]),
            ]
        )


def test_xai_and_mistral_upstreams_get_their_routing_hints(tmp_path):
    rec = Recorder()
    body = next(codex(CHAT, 1, model="grok-4"))
    resp = next(codex(RESPONSES, 1, model="grok-4"))
    with serve(rec.app()) as up:
        specs = [
            UpstreamSpec("xai", "openai", f"{up}/v1", rules="xai"),
            UpstreamSpec("mistral", "openai", f"{up}/v1", rules="mistral"),
        ]
        cfg = ProxyConfig(
            openai_base=f"{up}/v1",
            anthropic_base=up,
            state_dir=tmp_path / "state",
            rewrite="safe",
            upstreams=tuple(specs),
        )
        with serve(create_app(cfg)) as proxy:
            xai = openai.OpenAI(base_url=f"{proxy}/xai/v1", api_key="sk-xai", max_retries=0)
            xai.chat.completions.create(**body)
            xai.chat.completions.create(**body, extra_headers={"x-grok-conv-id": "mine"})
            xai.responses.create(**resp)
            mistral = openai.OpenAI(base_url=f"{proxy}/mistral/v1", api_key="sk-mistral", max_retries=0)
            mistral.chat.completions.create(**{**body, "model": "mistral-large-latest"})
    (_, h1, b1), (_, h2, b2), (_, h3, b3), (_, h4, b4) = rec.seen
    assert (
        len(h1["x-grok-conv-id"]) == 1
        and h1["x-grok-conv-id"][0].startswith("pg-")
        and "prompt_cache_key" not in b1
    )  # xAI Chat: the header
    assert h2["x-grok-conv-id"] == ["mine"]  # the client's header is never touched, nor doubled
    assert b3["prompt_cache_key"].startswith("pg-") and "x-grok-conv-id" not in h3  # xAI Responses: the field
    assert b4["prompt_cache_key"].startswith("pg-") and "x-grok-conv-id" not in h4  # Mistral: the field
    assert "instructions" in b3  # nor moved: GPT-5.6 markers are OpenAI's alone
    assert not any(
        "prompt_cache_breakpoint" in str(b) or "prompt_cache_options" in str(b) for b in (b1, b2, b3, b4)
    )


@pytest.mark.parametrize("api", [CHAT, RESPONSES])
def test_head_markers_go_12h_after_slow_returns_only_where_12h_writes_are_priced(tmp_path, api):
    """Responses only: Chat usage does not split writes by TTL, so a 12h write there is unpriceable."""
    from proxy.head_returns import HeadReturnsTracker

    now = [0.0]
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            anthropic_base=upstream,
            state_dir=tmp_path / "state",
            rewrite="safe",
        )
        app = create_app(cfg)
        app.state.gate.head_returns = HeadReturnsTracker(
            clock=lambda: now[0]
        )  # the proxy's view of time, 2 hours between calls
        kept = Keep()
        app.state.gate.recorder.add_sink(kept)
        with serve(app) as proxy:
            client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-ttl", max_retries=0)
            seen = {}
            for model in ("gpt-6.2-sol", "gpt-5.6-sol"):  # 12h writes: $5.00/M priced; null (unpublished)
                seen[model] = []
                for i in range(4):
                    body = next(codex(api, 1, seed=i, model=model))
                    create = client.chat.completions if api == CHAT else client.responses
                    raw = create.with_raw_response.create(**body)
                    assert (
                        raw.http_response.status_code == 200
                    )  # the emulator takes a breakpoint's own 12h on both APIs
                    seen[model].append(raw.headers["x-prefixgate-rewrites"].split(","))
                    now[0] += 2 * 3600
    # 1 write, then returns after 2 h: 1 × 1.15 < 1.25 (12h at 2.5× input), 2 × 1.15 > 1.25
    assert ["ttl-12h" in a for a in seen["gpt-6.2-sol"]] == (
        [False, False, True, True] if api == RESPONSES else [False] * 4
    )
    assert all("add-openai-breakpoints" in a and "ttl-12h" not in a for a in seen["gpt-5.6-sol"])
    assert len(kept.records) == 8 and all(
        r.cost_usd is not None and not r.flags for r in kept.records
    )  # the books stay exact
