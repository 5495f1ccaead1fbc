"""A mocked Gemini upstream (httpx.MockTransport) for the auto-cache's tests: it creates and
refreshes ``cachedContents/c1``, fails creates with ``create_status`` and refuses a request
naming the cache when told to; :func:`app_for` is a proxy in front of it, :func:`settle` waits
for the background calls, :func:`background` picks their records (``-create`` / ``-refresh``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import orjson
from starlette.testclient import TestClient

from proxy.app import create_app
from proxy.config import ProxyConfig

SYSTEM = {"parts": [{"text": "policy " * 1500}]}  # ≈ 2600 tokens
KEY = "AIza-manager-test"
GEN = "/v1beta/models/gemini-2.5-flash:generateContent"


def body(question: str) -> dict:
    return {"systemInstruction": SYSTEM, "contents": [{"role": "user", "parts": [{"text": question}]}]}


class Upstream:
    def __init__(self, create_status: int = 200, refuse_cached: bool = False):
        self.seen: list[httpx.Request] = []
        self.create_status = create_status
        self.refuse_cached = refuse_cached

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        doc = orjson.loads(request.content) if request.content else {}
        if request.url.path.endswith("/cachedContents"):
            if self.create_status != 200:
                return httpx.Response(
                    self.create_status,
                    json={"error": {"code": self.create_status, "message": "no", "status": "INTERNAL"}},
                )
            return httpx.Response(
                200, json={"name": "cachedContents/c1", "usageMetadata": {"totalTokenCount": 2600}}
            )
        if request.method == "PATCH":
            return httpx.Response(
                200, json={"name": "cachedContents/c1", "usageMetadata": {"totalTokenCount": 2600}}
            )
        if "cachedContent" in doc and self.refuse_cached:
            return httpx.Response(
                404,
                json={"error": {"code": 404, "message": "CachedContent not found", "status": "NOT_FOUND"}},
            )
        return httpx.Response(
            200, json={"candidates": [], "usageMetadata": {"promptTokenCount": 2610, "totalTokenCount": 2620}}
        )

    def calls(self, what: str) -> list[httpx.Request]:
        return (
            [r for r in self.seen if r.url.path.endswith(what)]
            if what != "PATCH"
            else [r for r in self.seen if r.method == "PATCH"]
        )


def app_for(state_dir, upstream: Callable, **config) -> TestClient:
    """A proxy with ``config`` whose Gemini upstream is ``upstream`` (an :class:`Upstream` or any
    MockTransport handler, async ones too)."""
    cfg = ProxyConfig(gemini_base="http://gemini.test", state_dir=state_dir, ledger=":memory:", **config)
    return TestClient(create_app(cfg, transport=httpx.MockTransport(upstream)))


def settle(manager) -> None:
    deadline = time.monotonic() + 5
    while manager.tasks and time.monotonic() < deadline:
        time.sleep(0.01)


def background(records, what: str) -> list:
    return [r for r in records if r.request_id.endswith(f"-{what}")]
