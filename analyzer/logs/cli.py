"""``prefixgate analyze``: where the money is in request logs (JSONL) and the proxy's ledger.

Prints a report (or ``--json``), with a progress bar on stderr when stderr is a terminal.
Lines or rows that cannot be read are named on stderr (file and line), the rest is
analysed, and the exit code is 2; otherwise 0.
"""

from __future__ import annotations

import json
import os
import sys

import click

from analyzer.logs.analysis import Analysis, AnalyzeConfig
from analyzer.logs.reader import is_ledger, read_any
from analyzer.logs.report import render, summarize


MAX_ERRORS_PER_FILE = 20  # a binary or wrong file would otherwise print one error per "line"


def _progress(total: int, enabled: bool):
    if not enabled or total <= 0:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    progress = Progress("analysing", BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    return progress


def run_analysis(paths: list[str], config: AnalyzeConfig, *, show_progress: bool = False) -> tuple[dict, list[str]]:
    errors: list[str] = []
    per_file: dict[str, int] = {}

    def on_error(path: str, line: int | None, message: str) -> None:
        n = per_file[path] = per_file.get(path, 0) + 1
        if n <= MAX_ERRORS_PER_FILE:
            errors.append(f"{path}:{line}: {message}" if line else f"{path}: {message}")

    analysis = Analysis(config)
    sizes = {p: os.path.getsize(p) for p in paths if os.path.isfile(p) and not is_ledger(p)}
    progress = _progress(sum(sizes.values()), show_progress)
    task = progress.add_task("analyse", total=sum(sizes.values())) if progress else None
    advance = (lambda n: progress.advance(task, n)) if progress else None
    if progress:
        progress.start()
    try:
        for path in paths:
            if not os.path.exists(path):
                on_error(path, None, "no such file")
                continue
            if os.path.isdir(path):
                on_error(path, None, "is a directory; name the .jsonl logs or the ledger file in it")
                continue
            for rec in read_any(path, on_error, advance):
                analysis.add(rec)
    finally:
        if progress:
            progress.stop()
    for path, n in per_file.items():
        if n > MAX_ERRORS_PER_FILE:
            errors.append(f"{path}: {n - MAX_ERRORS_PER_FILE:,} more unreadable line(s) not shown (is it a request log?)")
    return summarize(analysis, errors, paths), errors


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="How many repeated prefixes to list.")
@click.option("--ttl-openai", type=click.FloatRange(min=1), default=AnalyzeConfig.ttl_openai, show_default=True, help="Seconds an OpenAI cache entry lives idle.")
@click.option("--ttl-anthropic", type=click.FloatRange(min=1), default=AnalyzeConfig.ttl_anthropic, show_default=True, help="Seconds an Anthropic entry lives (300 or 3600).")
@click.option("--prices", metavar="FILE", help="Price table (default: the bundled analyzer/prices.json).")
@click.option("--no-prices", is_flag=True, help="Skip money figures.")
@click.option("--max-nodes", type=click.IntRange(min=1000), default=1_500_000, show_default=True, help="Prefix-tree node cap (memory bound).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
def analyze_command(paths, as_json, top, ttl_openai, ttl_anthropic, prices, no_prices, max_nodes, progress) -> None:
    """Repeated prefixes, allowed vs realised cache hit rate, savings and forks in JSONL logs or a ledger (.sqlite/.db)."""
    table = None
    if not no_prices:
        from analyzer.pricing import PriceTable

        try:
            table = PriceTable.load(prices)
        except (OSError, ValueError) as exc:
            raise click.UsageError(f"cannot load prices: {exc}") from None
    config = AnalyzeConfig(ttl_openai=ttl_openai, ttl_anthropic=ttl_anthropic, top=top, max_nodes=max_nodes, prices=table)
    show = sys.stderr.isatty() if progress is None else progress
    summary, errors = run_analysis(list(paths), config, show_progress=show)
    click.echo(json.dumps(summary, indent=2) if as_json else render(summary))
    for err in errors:
        click.echo(f"error: {err}", err=True)
    sys.exit(2 if errors else 0)
