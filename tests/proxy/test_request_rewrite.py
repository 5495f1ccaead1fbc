"""proxy.request_rewrite (the handler's rewrite step) against a mocked upstream (httpx.MockTransport):
which model the GPT-5.6 markers are chosen for (an Azure deployment route serves the deployment, whatever the
body's ``model`` says) and xAI's ``x-grok-conv-id`` header (added once, never doubled or replaced)."""

from __future__ import annotations

import httpx
import orjson
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig, UpstreamSpec

DEV = (
    "You are Forge, a coding agent. Read the repository before you edit; run the tests after. " * 120
)  # ~11 KB: past 1,024 tokens


def chat(model: str) -> dict:
    return {
        "model": model,
        "messages": [
            {"role": "developer", "content": DEV},
            {"role": "user", "content": "fix the failing test"},
        ],
    }


class Upstream:
    def __init__(self):
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        usage = {"prompt_tokens": 3000, "completion_tokens": 1, "total_tokens": 3001}
        return httpx.Response(
            200, json={"id": "c", "object": "chat.completion", "choices": [], "usage": usage}
        )


def gateway(state_dir, upstream: Upstream, *specs: UpstreamSpec) -> TestClient:
    cfg = ProxyConfig(
        openai_base="http://openai.test/v1",
        state_dir=state_dir,
        ledger=":memory:",
        rewrite="safe",
        upstreams=specs,
    )
    return TestClient(create_app(cfg, transport=httpx.MockTransport(upstream)))


def test_an_azure_deployment_route_is_marked_for_its_deployment_not_the_bodys_model(state_dir):
    upstream = Upstream()
    azure = UpstreamSpec("azure", "openai", "https://res.openai.azure.com/openai")
    with gateway(state_dir, upstream, azure) as client:
        auth = {"api-key": "az-key"}
        # the AzureOpenAI SDK with azure_deployment= sends the body's model as given: the deployment serves its own model
        old = client.post(
            "/azure/openai/deployments/prod-gpt55/chat/completions?api-version=2025-04-01",
            json=chat("gpt-5.6-sol"),
            headers=auth,
        )
        new = client.post(
            "/azure/openai/deployments/gpt-5.6-sol/chat/completions?api-version=2025-04-01",
            json=chat("gpt-5.6-sol"),
            headers=auth,
        )
        v1 = client.post(
            "/azure/openai/v1/chat/completions", json=chat("gpt-5.6-sol"), headers=auth
        )  # the v1 API: the body names the deployment
    assert [r.status_code for r in (old, new, v1)] == [200, 200, 200]
    sent = [r.content for r in upstream.requests]
    assert b"prompt_cache_breakpoint" not in sent[0] and b"prompt_cache_options" not in sent[0]
    assert "add-openai-breakpoints" not in old.headers.get("x-prefixgate-rewrites", "")
    assert b"prompt_cache_breakpoint" in sent[1] and b"prompt_cache_breakpoint" in sent[2]


def test_the_xai_header_is_added_once_and_a_clients_own_is_never_doubled_or_replaced(state_dir):
    upstream = Upstream()
    xai = UpstreamSpec("xai", "openai", "https://api.x.ai/v1", rules="xai")
    with gateway(state_dir, upstream, xai) as client:
        auth = {"authorization": "Bearer xai-key"}
        ours = client.post("/xai/v1/chat/completions", json=chat("grok-4"), headers=auth)
        theirs = client.post(
            "/xai/v1/chat/completions", json=chat("grok-4"), headers={**auth, "X-Grok-Conv-Id": "mine"}
        )
    assert ours.status_code == theirs.status_code == 200
    first, second = upstream.requests
    assert len(first.headers.get_list("x-grok-conv-id")) == 1 and first.headers["x-grok-conv-id"].startswith(
        "pg-"
    )
    assert second.headers.get_list("x-grok-conv-id") == ["mine"]
    assert orjson.loads(first.content) == chat("grok-4")  # the hint is the header only: the body goes as sent
    assert "xai-conv-id" in ours.headers["x-prefixgate-rewrites"] and "xai-conv-id" not in theirs.headers.get(
        "x-prefixgate-rewrites", ""
    )
