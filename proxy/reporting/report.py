"""``prefixgate report``: the cost and savings summary of a ledger, in the terminal.

Reads one ledger, or several replicas' as one (:mod:`.ledger_union`), read-only (a running proxy
may keep writing it), and prints the summary the dashboard shows (:func:`.summary.summarize`) as
tables (:mod:`.report_tables`); ``--json`` prints the whole summary, ``--csv`` the per-model rows.
``--since`` takes ``24h``, ``7d``, ``30m`` or an ISO time (default: all).

Exit codes: 0 printed, 2 bad flag or unreadable ledger. It never writes to the ledger.
See docs/dashboard.md.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import sys
from typing import Any

import click

from proxy.accounting.ledger_schema import LedgerError
from proxy.config import ProxyConfig
from proxy.reporting.ledger_union import open_ledgers
from proxy.reporting.report_tables import render_table
from proxy.reporting.summary import summarize
from proxy.reporting.time_range import parse_since

CSV_FIELDS = (
    "provider",
    "model",
    "requests",
    "prefix_hits",
    "input_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "output_tokens",
    "token_hit_rate",
    "cost_usd",
    "saved_usd",
    "missed_usd",
    "unpriced",
    "errors",
)


def load_summary(ledgers: str | list[str], since: str | None) -> dict[str, Any]:
    """The summary of ``ledgers`` since ``since``; a bad ``--since`` or an unreadable ledger is a
    click usage error (exit 2)."""
    paths = [ledgers] if isinstance(ledgers, str) else list(ledgers)
    try:
        start = parse_since(since)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    try:
        conn = open_ledgers(paths)
        try:
            return summarize(conn, since=start)
        finally:
            conn.close()
    except LedgerError as exc:
        raise click.UsageError(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise click.UsageError(f"ledger {', '.join(paths)}: {exc}") from None


def render_csv(summary: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for m in summary["models"]:
        writer.writerow(m)
    return buf.getvalue()


@click.command("report")
@click.option(
    "--ledger",
    "ledger",
    multiple=True,
    help="SQLite ledger (default: the one `serve` writes); repeat it to read several replicas' ledgers as one.",
)
@click.option("--since", default=None, help="24h, 7d, 30m, or an ISO time; default all.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole summary as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the per-model rows as CSV.")
def report_command(ledger: tuple[str, ...], since: str | None, as_json: bool, as_csv: bool) -> None:
    """Cost and savings summary from the ledger."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    summary = load_summary(list(ledger) or [ProxyConfig().ledger_path], since)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif as_csv:
        sys.stdout.write(render_csv(summary))
    else:
        click.echo(render_table(summary), nl=False)
