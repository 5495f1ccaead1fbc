"""``prefixgate bench rewrite``: what ``--rewrite`` buys on an agent workload, in tokens and USD.

Starts the emulator and the proxy on loopback and replays agent conversations
(:mod:`proxy.bench.agent_workload`) with ``x-prefixgate-rewrite: off`` / ``safe`` /
``aggressive``, on OpenAI Chat Completions and Anthropic Messages, against the *ideal* app (nothing
volatile) and the tool-order part alone; each (provider, variant) has its own API key. It
reports prompt and cached tokens, hit rate, USD and the share of the ideal's cached tokens, then
GPT-5.6 (:mod:`proxy.bench.rewrite_gpt56`). One JSON object, then tables unless ``--json``.
``--corpus DIR`` measures head reuse on labelled prompts instead (:mod:`proxy.bench.rewrite_corpus`).
This module sends only to the emulator it starts. See docs/measured.md (rewrite).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click
import httpx
import orjson

from analyzer.cost import cost_of
from analyzer.pricing import PriceTable
from analyzer.usage import from_anthropic, from_openai_chat
from proxy.bench.agent_workload import conversation
from proxy.bench.procs import emulator_and_proxy
from proxy.bench.rewrite_gpt56 import run_gpt56
from proxy.bench.rewrite_gpt56 import table as gpt56_table

# variant → (workload: clock and id in the system prompt?, tools reshuffled?, --rewrite mode)
VARIANTS = {
    "ideal": (False, False, "safe"),  # nothing volatile, breakpoints where Anthropic wants them
    "off": (True, True, "off"),
    "safe": (True, True, "safe"),
    "aggressive": (True, True, "aggressive"),
    "tools-only off": (False, True, "off"),  # only the tool order varies
    "tools-only safe": (False, True, "safe"),
}
MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-6"}


def _replay(client: httpx.Client, provider: str, variant: str, conversations: int, turns: int) -> dict:
    clock, shuffle, mode = VARIANTS[variant]
    key = f"sk-bench-rewrite-{provider}-{variant.replace(' ', '-')}"
    headers = {"x-prefixgate-rewrite": mode}
    if provider == "anthropic":
        route, headers = "/v1/messages", {**headers, "x-api-key": key, "anthropic-version": "2023-06-01"}
    else:
        route, headers = "/v1/chat/completions", {**headers, "authorization": f"Bearer {key}"}
    price = PriceTable.load().lookup(MODELS[provider])
    totals = {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0, "cache_write_tokens": 0, "cost_usd": 0.0}
    for seed in range(conversations):
        for body in conversation(
            provider, turns, volatile=clock, shuffle=shuffle, seed=seed + 1, model=MODELS[provider]
        ):
            response = client.post(
                route, content=orjson.dumps(body), headers={**headers, "content-type": "application/json"}
            )
            if response.status_code != 200:
                raise click.ClickException(
                    f"{provider}/{variant}: HTTP {response.status_code}: {response.text[:200]}"
                )
            raw = response.json()["usage"]
            usage = from_anthropic(raw) if provider == "anthropic" else from_openai_chat(raw)
            totals["requests"] += 1
            totals["prompt_tokens"] += usage.input_tokens
            totals["cached_tokens"] += usage.cached_tokens
            totals["cache_write_tokens"] += usage.cache_write_tokens
            totals["cost_usd"] += cost_of(usage, price).cost_usd or 0.0
    totals["hit_rate"] = totals["cached_tokens"] / totals["prompt_tokens"] if totals["prompt_tokens"] else 0.0
    totals["cost_usd"] = round(totals["cost_usd"], 6)
    return totals


def run(conversations: int, turns: int, codex_requests: int = 12) -> dict:
    with tempfile.TemporaryDirectory(prefix="pg-bench-rewrite-") as tmp:
        with emulator_and_proxy(Path(tmp)) as (_emu_port, proxy_port):
            results: dict = {}
            with httpx.Client(base_url=f"http://127.0.0.1:{proxy_port}", timeout=60) as client:
                for provider in ("openai", "anthropic"):
                    rows = {
                        variant: _replay(client, provider, variant, conversations, turns)
                        for variant in VARIANTS
                    }
                    ideal = rows["ideal"]["cached_tokens"] or 1
                    for row in rows.values():
                        row["of_ideal"] = row["cached_tokens"] / ideal
                    results[provider] = rows
                gpt56 = run_gpt56(client, conversations, turns, codex_requests)
    return {
        "bench": "rewrite",
        "conversations": conversations,
        "turns": turns,
        "codex_requests": codex_requests,
        "models": {**MODELS, "gpt-5.6": "gpt-5.6-sol"},
        "results": results,
        "gpt-5.6": gpt56,
    }


def _table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"prefixgate bench rewrite — {result['conversations']} conversations × {result['turns']} turns per row"
    )
    for name in ("provider", "variant", "prompt tokens", "cached", "hit rate", "cost USD", "cached vs ideal"):
        table.add_column(name, justify="left" if name in ("provider", "variant") else "right")
    for provider, rows in result["results"].items():
        for variant, row in rows.items():
            table.add_row(
                provider,
                variant,
                f"{row['prompt_tokens']:,}",
                f"{row['cached_tokens']:,}",
                f"{row['hit_rate']:.1%}",
                f"{row['cost_usd']:.4f}",
                f"{row['of_ideal']:.1%}",
            )
    console = Console(stderr=False)
    console.print(table)
    console.print(gpt56_table(result))


@click.command("rewrite")
@click.option(
    "--conversations",
    default=3,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Conversations per provider and variant.",
)
@click.option(
    "--turns", default=24, show_default=True, type=click.IntRange(2, 200), help="Turns per conversation."
)
@click.option(
    "--codex-requests",
    default=12,
    show_default=True,
    type=click.IntRange(2, 500),
    help="GPT-5.6 codex pattern: one-shot requests per API and variant.",
)
@click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A folder of prompts with ⟦labelled⟧ spans: head reuse off vs aggressive, rendered twice (no emulator).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON object (no table).")
def bench_rewrite_command(
    conversations: int, turns: int, codex_requests: int, corpus: Path | None, as_json: bool
) -> None:
    """Cached tokens, hit rate and USD for off / safe / aggressive vs the ideal app: OpenAI, Anthropic, GPT-5.6.
    With --corpus: head reuse of off vs aggressive on labelled prompts instead."""
    if corpus is not None:
        from proxy.bench.rewrite_corpus import measure, table

        result = measure(corpus)
        if not result["prompts"]:
            raise click.ClickException(f"no labelled prompt (⟦…⟧ spans) under {corpus}")
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        if not as_json:
            click.echo(table(result))
        return
    result = run(conversations, turns, codex_requests)
    click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if not as_json:
        _table(result)
