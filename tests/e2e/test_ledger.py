"""End to end for the ledger's invariant: one record per request, and the ledger never stops.

A real prefixgate (uvicorn) in front of a tiny upstream (uvicorn) whose first answer reports
``completion_tokens`` one past SQLite's signed 64-bit range, then normal usage.
"""

from __future__ import annotations

import sqlite3

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from analyzer.usage import MAX_TOKENS
from proxy.app import create_app
from proxy.config import ProxyConfig
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

ABSURD = b'{"id":"a","usage":{"prompt_tokens":12,"completion_tokens":9223372036854775808}}'
NORMAL = b'{"id":"b","usage":{"prompt_tokens":12,"completion_tokens":3}}'
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def upstream() -> Starlette:
    answers = [ABSURD]

    async def chat(request):
        await request.body()
        body = answers.pop() if answers else NORMAL
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def test_an_absurd_usage_number_never_stops_the_ledger_or_stats(tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    with serve(upstream()) as up:
        cfg = ProxyConfig(
            openai_base=f"{up}/v1", anthropic_base=up, state_dir=tmp_path / "state", ledger=str(ledger)
        )
        with serve(create_app(cfg)) as proxy:
            with httpx.Client(base_url=proxy, timeout=30) as client:
                first = client.post("/v1/chat/completions", json=CHAT)
                second = client.post("/v1/chat/completions", json=CHAT)
                stats = client.get("/prefixgate/stats")
                summary = client.get("/prefixgate/api/summary")  # flushes the ledger first
                health = client.get("/prefixgate/health")
    assert first.status_code == second.status_code == 200
    assert first.content == ABSURD  # the client gets the upstream's bytes as they were
    assert stats.status_code == 200 and stats.json()["requests"] == 2
    assert stats.json()["output_tokens"] == MAX_TOKENS + 3
    assert summary.status_code == 200 and summary.json()["requests"] == 2
    assert health.status_code == 200 and health.json()["status"] == "ok"
    led = health.json()["ledger"]
    assert led["writer_alive"] and (led["written"], led["failures"], led["dropped"], led["flagged"]) == (
        2,
        0,
        0,
        1,
    )
    rows = (
        sqlite3.connect(ledger)
        .execute("SELECT output_tokens, flags, cost_usd FROM requests ORDER BY id")
        .fetchall()
    )
    assert rows[0] == (MAX_TOKENS, "usage.completion_tokens:too_large", None)  # clamped, flagged, priced null
    assert rows[1][:2] == (3, None) and rows[1][2] is not None  # the next request's row is there
