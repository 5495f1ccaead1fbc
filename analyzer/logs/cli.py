"""``prefixgate analyze``: where the money is in request logs (JSONL) and the proxy's ledger.

Prints a report (or ``--json``), with a progress bar on stderr when stderr is a terminal
(bytes of each JSONL log, rows of each ledger; nothing when piped, ``--progress`` /
``--no-progress`` to choose).
Lines or rows that cannot be read are named on stderr (file and line), the rest is
analysed, and the exit code is 2; otherwise 0.
"""

from __future__ import annotations

import json
import os
import sys

import click

from analyzer.logs.analysis import LogAnalysis
from analyzer.logs.config import AnalyzeConfig
from analyzer.logs.reader import is_ledger, ledger_rows, read_any
from analyzer.logs.report import render, summarize

#: a binary or wrong file would otherwise print one error per "line"
MAX_ERRORS_PER_FILE = 20


def _progress(enabled: bool):
    """A rich progress bar on stderr (one task per input), or None."""
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[done]}"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def _sizes(path: str) -> tuple[int | None, str]:
    """How much of ``path`` there is to read, and in what: ledger rows or JSONL bytes."""
    if is_ledger(path):
        return ledger_rows(path), "rows"
    return os.path.getsize(path), "bytes"


def _done(completed: float, total: float | None, unit: str) -> str:
    if unit == "bytes":
        return f"{completed / 1e6:,.1f}/{(total or 0) / 1e6:,.1f} MB"
    return f"{int(completed):,}/{int(total or 0):,} rows"


def run_analysis(
    paths: list[str], config: AnalyzeConfig, *, show_progress: bool = False
) -> tuple[dict, list[str]]:
    """Analyse every path; with ``show_progress``, a bar per file on stderr (bytes of a JSONL
    log, rows of a ledger), gone when done."""
    errors: list[str] = []
    per_file: dict[str, int] = {}

    def on_error(path: str, line: int | None, message: str) -> None:
        n = per_file[path] = per_file.get(path, 0) + 1
        if n <= MAX_ERRORS_PER_FILE:
            errors.append(f"{path}:{line}: {message}" if line else f"{path}: {message}")

    analysis = LogAnalysis(config)
    progress = _progress(show_progress)
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
            advance = None
            if progress:
                total, unit = _sizes(path)
                task = progress.add_task(os.path.basename(path), total=total, done=_done(0, total, unit))
                state = {"n": 0}

                def advance(n: int, task=task, total=total, unit=unit, state=state) -> None:
                    state["n"] += n
                    if state["n"] - state.get("shown", 0) >= (
                        65536 if unit == "bytes" else 256
                    ):  # redraw in steps, not per line
                        state["shown"] = state["n"]
                        progress.update(task, completed=state["n"], done=_done(state["n"], total, unit))

            for rec in read_any(path, on_error, advance):
                analysis.add(rec)
    finally:
        if progress:
            progress.stop()
    for path, n in per_file.items():
        if n > MAX_ERRORS_PER_FILE:
            errors.append(
                f"{path}: {n - MAX_ERRORS_PER_FILE:,} more unreadable line(s) not shown (is it a request log?)"
            )
    return summarize(analysis, errors, paths), errors


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many repeated prefixes to list.",
)
@click.option(
    "--ttl-openai",
    type=click.FloatRange(min=1),
    default=AnalyzeConfig.ttl_openai,
    show_default=True,
    help="Seconds an OpenAI cache entry lives idle.",
)
@click.option(
    "--ttl-anthropic",
    type=click.FloatRange(min=1),
    default=AnalyzeConfig.ttl_anthropic,
    show_default=True,
    help="Seconds an Anthropic entry lives (300 or 3600).",
)
@click.option("--prices", metavar="FILE", help="Price table (default: the bundled analyzer/prices.json).")
@click.option("--no-prices", is_flag=True, help="Skip money figures.")
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1000),
    default=1_500_000,
    show_default=True,
    help="Prefix-tree node cap (memory bound).",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)
def analyze_command(
    paths, as_json, top, ttl_openai, ttl_anthropic, prices, no_prices, max_nodes, progress
) -> None:
    """Repeated prefixes, allowed vs realised cache hit rate, savings and forks in JSONL logs or a ledger (.sqlite/.db)."""
    table = None
    if not no_prices:
        from analyzer.pricing import PriceTable

        try:
            table = PriceTable.load(prices)
        except (OSError, ValueError) as exc:
            raise click.UsageError(f"cannot load prices: {exc}") from None
    config = AnalyzeConfig(
        ttl_openai=ttl_openai, ttl_anthropic=ttl_anthropic, top=top, max_nodes=max_nodes, prices=table
    )
    show = sys.stderr.isatty() if progress is None else progress
    summary, errors = run_analysis(list(paths), config, show_progress=show)
    click.echo(json.dumps(summary, indent=2) if as_json else render(summary))
    for err in errors:
        click.echo(f"error: {err}", err=True)
    sys.exit(2 if errors else 0)
