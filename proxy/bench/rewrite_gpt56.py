"""The GPT-5.6 part of ``prefixgate bench rewrite``: breakpoints the app did not place.

Replays :mod:`proxy.bench.gpt56_workload` through the proxy (to the emulator's GPT-5.6 rules) on
Chat Completions and Responses, for three workloads: ``codex`` (one-shot calls sharing a prompt),
``agent`` (agent loops with a clock, a request id and reshuffled tools) and ``agent-stable`` (the
same loops with nothing volatile and no marker). Variants ``off`` / ``safe`` / ``aggressive``
and ``ideal`` (the app marking its own head), each with its own API key; each row gives tokens,
hit rate, cost (``gpt-5.6-sol`` prices), ``of_ideal`` and ``cost_vs_ideal``.
This module sends only to the proxy it is given. See docs/measured.md (rewrite).
"""

from __future__ import annotations

from collections.abc import Iterator

import click
import httpx
import orjson

from analyzer.cost import cost_of
from analyzer.pricing import PriceTable
from analyzer.usage import from_openai_chat, from_openai_responses
from proxy.bench.gpt56_workload import CHAT, MODEL, RESPONSES, agent_loop, codex

VARIANTS = ("ideal", "off", "safe", "aggressive")
WORKLOADS = ("codex", "agent", "agent-stable")
APIS = {CHAT: "/v1/chat/completions", RESPONSES: "/v1/responses"}
SHORT = {CHAT: "chat", RESPONSES: "responses"}


def _bodies(
    workload: str, api: str, variant: str, conversations: int, turns: int, requests: int
) -> Iterator[dict]:
    ideal = variant == "ideal"
    if workload == "codex":
        yield from codex(api, requests, marked=ideal)
        return
    for seed in range(conversations):
        yield from agent_loop(api, turns, volatile=workload == "agent", marked=ideal, seed=seed + 1)


def _replay(
    client: httpx.Client, workload: str, api: str, variant: str, conversations: int, turns: int, requests: int
) -> dict:
    key = f"sk-bench-rewrite-gpt56-{workload}-{api}-{variant}"
    headers = {
        "x-prefixgate-rewrite": "off" if variant == "ideal" else variant,
        "authorization": f"Bearer {key}",
        "content-type": "application/json",
    }
    price = PriceTable.load().lookup(MODEL)
    parse = from_openai_chat if api == CHAT else from_openai_responses
    totals = {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0, "cache_write_tokens": 0, "cost_usd": 0.0}
    for body in _bodies(workload, api, variant, conversations, turns, requests):
        response = client.post(APIS[api], content=orjson.dumps(body), headers=headers)
        if response.status_code != 200:
            raise click.ClickException(
                f"gpt-5.6 {workload}/{api}/{variant}: HTTP {response.status_code}: {response.text[:200]}"
            )
        usage = parse(response.json()["usage"])
        totals["requests"] += 1
        totals["prompt_tokens"] += usage.input_tokens
        totals["cached_tokens"] += usage.cached_tokens
        totals["cache_write_tokens"] += usage.cache_write_tokens
        cost = cost_of(usage, price).cost_usd
        if cost is None:
            raise click.ClickException(f"gpt-5.6 {workload}/{api}/{variant}: a response could not be priced")
        totals["cost_usd"] += cost
    totals["hit_rate"] = totals["cached_tokens"] / totals["prompt_tokens"] if totals["prompt_tokens"] else 0.0
    totals["cost_usd"] = round(totals["cost_usd"], 6)
    return totals


def run_gpt56(client: httpx.Client, conversations: int, turns: int, requests: int) -> dict:
    """``{workload: {api: {variant: row}}}`` (see the module docstring)."""
    out: dict = {}
    for workload in WORKLOADS:
        for api in APIS:
            rows = {v: _replay(client, workload, api, v, conversations, turns, requests) for v in VARIANTS}
            ideal = rows["ideal"]
            for row in rows.values():
                row["of_ideal"] = (
                    row["cached_tokens"] / ideal["cached_tokens"] if ideal["cached_tokens"] else 0.0
                )
                row["cost_vs_ideal"] = row["cost_usd"] / ideal["cost_usd"] if ideal["cost_usd"] else 0.0
            out.setdefault(workload, {})[api] = rows
    return out


def table(result: dict):
    from rich.table import Table

    table = Table(
        title=f"GPT-5.6 ({MODEL}) — codex: {result['codex_requests']} requests; agent: "
        f"{result['conversations']} conversations × {result['turns']} turns"
    )
    for name in (
        "workload",
        "API",
        "variant",
        "prompt",
        "cached",
        "writes",
        "hit",
        "USD",
        "cached/ideal",
        "USD/ideal",
    ):
        table.add_column(name, justify="left" if name in ("workload", "API", "variant") else "right")
    for workload, apis in result["gpt-5.6"].items():
        for api, rows in apis.items():
            for variant, row in rows.items():
                table.add_row(
                    workload,
                    SHORT[api],
                    variant,
                    f"{row['prompt_tokens']:,}",
                    f"{row['cached_tokens']:,}",
                    f"{row['cache_write_tokens']:,}",
                    f"{row['hit_rate']:.1%}",
                    f"{row['cost_usd']:.4f}",
                    f"{row['of_ideal']:.1%}",
                    f"{row['cost_vs_ideal']:.2f}×",
                )
    return table
