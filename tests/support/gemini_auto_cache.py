"""A mocked Gemini upstream (httpx.MockTransport) that refuses a request naming its cached
content when told to, and a proxy with the Gemini auto-cache already warmed in front of it.

:class:`Gemini` creates ``cachedContents/c1`` and answers a request naming it with ``refusal``
(when set); :func:`auto_cached_proxy` starts the proxy (``gemini_auto_cache_after=1``), lets one
request create the entry and checks that the next one uses it, and yields
``(TestClient, Gemini, ClientRecords)``. :func:`body` is a request whose system instruction is
over 2.5 Flash's caching minimum.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import orjson
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig
from tests.support.sinks import ClientRecords

SYSTEM = {"parts": [{"text": "policy " * 1500}]}  # ≈ 2600 tokens: over 2.5 Flash's minimum
KEY = {"x-goog-api-key": "AIza-relay-resend"}
GEN = "/v1beta/models/gemini-2.5-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
REFUSED = orjson.dumps(
    {
        "error": {
            "code": 403,
            "message": "CachedContent not found (or permission denied)",
            "status": "PERMISSION_DENIED",
        }
    }
)
ANSWER = {
    "candidates": [{"content": {"parts": [{"text": "ok"}]}}],
    "usageMetadata": {"promptTokenCount": 2610, "totalTokenCount": 2620},
}


def body(question: str) -> dict:
    return {"systemInstruction": SYSTEM, "contents": [{"role": "user", "parts": [{"text": question}]}]}


class Gemini:
    """Creates cachedContents/c1; answers a request naming it with ``refusal`` (when set)."""

    def __init__(self):
        self.refusal: httpx.Response | None = None
        self.unreachable_after_refusal = False
        self.generate: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cachedContents"):
            return httpx.Response(
                200, json={"name": "cachedContents/c1", "usageMetadata": {"totalTokenCount": 2600}}
            )
        self.generate.append(request)
        if b"cachedContent" in request.content and self.refusal is not None:
            return self.refusal
        if (
            self.unreachable_after_refusal
            and len(self.generate) > 1
            and b"cachedContent" in self.generate[-2].content
        ):
            raise httpx.ConnectError("refused")
        if "streamGenerateContent" in request.url.path:
            return httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content=b"data: " + orjson.dumps(ANSWER) + b"\r\n\r\n",
            )
        return httpx.Response(200, json=ANSWER)


@contextlib.contextmanager
def auto_cached_proxy(state_dir) -> Iterator[tuple[TestClient, Gemini, ClientRecords]]:
    gemini, keep = Gemini(), ClientRecords()
    cfg = ProxyConfig(
        gemini_base="http://gemini.test",
        state_dir=state_dir,
        ledger=":memory:",
        gemini_auto_cache=True,
        gemini_auto_cache_after=1,
    )
    with TestClient(create_app(cfg, transport=httpx.MockTransport(gemini))) as client:
        client.app.state.gate.recorder.add_sink(keep)
        assert (
            client.post(GEN, json=body("warm"), headers=KEY).headers["x-prefixgate-gemini-cache"]
            == "creating"
        )
        manager = client.app.state.gate.gemini_auto_cache.manager
        deadline = time.monotonic() + 5  # a bound on the background create, not a speed check
        while manager.tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        assert client.post(GEN, json=body("hit"), headers=KEY).headers["x-prefixgate-gemini-cache"] == "hit"
        yield client, gemini, keep
