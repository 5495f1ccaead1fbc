"""proxy.exchange: one object per request, and nothing keeps it once its record is out."""

from __future__ import annotations

import gc
import json

import httpx
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.exchange import Exchange

USAGE = {"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1536}}
CHAT = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "system", "content": "You are terse. " * 400}, {"role": "user", "content": "hi"}],
}


def _live_exchanges() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if type(o) is Exchange}


def test_every_outcome_leaves_no_exchange_behind(state_dir):
    # Before: the money layer kept each request's early diagnosis in a table keyed by request
    # id until its record came, bounded only by a count. Now it travels on the exchange, and
    # nothing the app keeps (gate, recorder, money, sinks) holds one after its record.
    def upstream(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/embeddings"):
            raise httpx.ConnectError("refused")
        stream = json.loads(request.content).get("stream")
        if stream:
            body = b'data: {"choices":[],"usage":' + json.dumps(USAGE).encode() + b"}\n\ndata: [DONE]\n\n"
            return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json={"usage": USAGE})

    cfg = ProxyConfig(
        openai_base="http://openai.test/v1",
        anthropic_base="http://anthropic.test",
        state_dir=state_dir,
        max_body=64 * 1024,
    )
    with TestClient(create_app(cfg, transport=httpx.MockTransport(upstream))) as client:
        before = (
            _live_exchanges()
        )  # other tests' may linger (an exception kept as a parameter holds its frames)
        seen = [
            client.post("/v1/chat/completions", json=CHAT).status_code,
            client.post("/v1/chat/completions", json={**CHAT, "stream": True}).status_code,  # edited stream
            client.post(
                "/v1/embeddings", json={"model": "e", "input": "x"}
            ).status_code,  # upstream unreachable
            client.post(
                "/v1/chat/completions", content=b"x" * (65 * 1024)
            ).status_code,  # body over the limit
            client.get("/v1/a%2Fb").status_code,  # refused by the router: no target
        ]
        for _ in range(20):
            client.post("/v1/chat/completions", json=CHAT)
        new = _live_exchanges() - before
        stats = client.get("/prefixgate/stats").json()
    assert seen[:3] == [200, 200, 502] and seen[3] == 413 and seen[4] == 400
    assert stats["requests"] == 25
    assert new == set()
