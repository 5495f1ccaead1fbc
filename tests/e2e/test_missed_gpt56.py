"""End to end for GPT-5.6's missed savings: the OpenAI SDK → prefixgate (uvicorn, ``--rewrite
off``) → emulator (uvicorn, GPT-5.6 rules: breakpoints only, exact matches, writes billed 1.25×).

The codex pattern — a long developer prompt and one new user message per request, no
``prompt_cache_breakpoint`` — reads 0%: the only breakpoint is the implicit one at the changing
user message. prefixgate names the missing head breakpoint in ``x-prefixgate-miss-reason`` and
counts the head as missed, priced at the write rate the app paid on every rewrite less the
cached read. The same app marking its head reads it, and misses nothing.
"""

from __future__ import annotations

import contextlib
import sqlite3

import openai
import pytest

from analyzer.pricing import PriceTable
from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.emulator.app import create_app as create_emulator
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

MODEL = "gpt-5.6-terra"
DEV = (
    "You are a coding agent working in the user's repository; follow the repository's conventions. " * 383
)  # ≈9k tokens
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "Run a command in the repository.",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
        },
    }
]
TASKS = (
    "Fix the failing test in tests/test_app.py.",
    "Now add a test for the empty input case.",
    "Rename the helper to parse_args.",
)


@contextlib.contextmanager
def gateway(tmp_path):
    with serve(create_emulator()) as upstream:
        cfg = ProxyConfig(
            openai_base=f"{upstream}/v1",
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            rewrite="off",
        )
        with serve(create_app(cfg)) as proxy:
            yield openai.OpenAI(base_url=f"{proxy}/v1", api_key="sk-gpt56-missed-e2e", max_retries=0)


def messages(task: str, marked: bool) -> list[dict]:
    part = {
        "type": "text",
        "text": DEV,
        **({"prompt_cache_breakpoint": {"mode": "explicit"}} if marked else {}),
    }
    return [{"role": "developer", "content": [part]}, {"role": "user", "content": task}]


def run(client: openai.OpenAI, marked: bool):
    return [
        client.chat.completions.with_raw_response.create(
            model=MODEL, tools=TOOLS, messages=messages(task, marked)
        )
        for task in TASKS
    ]


def ledger(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        return db.execute("SELECT missed_usd, miss_reason FROM requests ORDER BY id").fetchall()


def head_tokens() -> int:
    body = {"model": MODEL, "tools": TOOLS, "messages": messages("x", False)}
    return estimate_tokens(sum(len(s.data) for s in segments_for("openai", "/v1/chat/completions", body)[:2]))


def test_the_codex_pattern_misses_its_head_and_prefixgate_says_why_and_how_much(tmp_path):
    with gateway(tmp_path) as client:
        replies = run(client, marked=False)
    usages = [r.parse().usage for r in replies]
    assert all(u.prompt_tokens_details.cached_tokens == 0 for u in usages)  # 0% read: the off run
    assert all(
        u.prompt_tokens_details.cache_write_tokens >= head_tokens() for u in usages
    )  # the head written every time
    assert "x-prefixgate-miss-reason" not in replies[0].headers  # nothing earlier to compare with
    for reply in replies[1:]:
        assert reply.headers["x-prefixgate-miss-reason"] == "no-breakpoint-at-head; path=messages[0]"
    rows = ledger(tmp_path)
    price = PriceTable.load().lookup(MODEL)
    per_request = (
        head_tokens() * (price.cache_write_30m - price.cache_read) / 1e6
    )  # the write premium, every rewrite
    assert rows[0][0] == 0.0
    for missed, reason in rows[1:]:
        assert reason == "no-breakpoint-at-head; path=messages[0]"
        assert missed > 0 and abs(missed - per_request) < 1e-9


def test_marking_the_head_reads_it_and_misses_nothing(tmp_path):
    with gateway(tmp_path) as client:
        replies = run(client, marked=True)
    cached = [r.parse().usage.prompt_tokens_details.cached_tokens for r in replies]
    assert cached[0] == 0 and all(c == head_tokens() for c in cached[1:])
    assert all("x-prefixgate-miss-reason" not in r.headers for r in replies)
    assert [row[0] for row in ledger(tmp_path)] == [0.0, 0.0, 0.0]
