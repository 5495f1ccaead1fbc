"""``prefixgate report``: the cost and savings summary of a ledger, in the terminal.

Reads the SQLite ledger read-only (a running proxy may keep writing it) and prints the
same summary the dashboard shows (:func:`proxy.accounting.summary.summarize`): a rich table of totals
(every shown counter of :data:`proxy.accounting.counters.COUNTERS`, formatted by its kind),
one row per model, the miss reasons and the requests per rewrite id; ``--json`` prints the
whole summary as JSON, ``--csv`` the per-model rows. ``--since`` takes ``24h``, ``7d``,
``30m`` or an ISO time (default: all).

Exit codes: 0 printed, 2 bad flag or unreadable ledger. It never writes to the ledger.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import sys
from typing import Any

import click

from proxy.config import ProxyConfig
from proxy.accounting.counters import BY_NAME, COUNTERS
from proxy.accounting.ledger import LedgerError, connect
from proxy.accounting.summary import parse_since, summarize

CSV_FIELDS = ("provider", "model", "requests", "prefix_hits", "input_tokens", "cached_tokens", "cache_write_tokens",
              "output_tokens", "token_hit_rate", "cost_usd", "saved_usd", "missed_usd", "unpriced", "errors")


def usd(value: float | None) -> str:
    if value is None:
        return "—"
    sign, a = ("-" if value < 0 else ""), abs(value)
    digits = 2 if a == 0 or a >= 1 else 4 if a >= 0.01 else 6  # the dashboard's rule
    return f"{sign}${a:,.{digits}f}"


def load_summary(ledger: str, since: str | None) -> dict[str, Any]:
    try:
        start = parse_since(since)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    try:
        conn = connect(ledger, readonly=True)
        try:
            return summarize(conn, since=start)
        finally:
            conn.close()
    except LedgerError as exc:
        raise click.UsageError(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise click.UsageError(f"ledger {ledger}: {exc}") from None


# The counters the totals table places on its own rows (the rest follow, by name).
TOKEN_ROW = ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens")
PLACED = {"requests", "cost_usd", "saved_usd", "missed_usd", "prefix_hits", "prefix_unknown", *TOKEN_ROW,
          "unpriced", "unanalysed", "errors", "rewritten"}


def value(name: str, summary: dict[str, Any]) -> str:
    """A counter's value as the report prints it: by the counter's kind in the table."""
    v = summary[name]
    return usd(v) if BY_NAME[name].kind == "usd" else f"{v:,}"


def total_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The totals table: the familiar rows first, then each shown counter they do not place
    (by its name), so a counter added to the table is printed without a change here."""
    rows = [
        ("requests", value("requests", s)),
        ("spent", value("cost_usd", s)),
        ("saved by caching", value("saved_usd", s)),
        ("missed savings", value("missed_usd", s)),
        ("token hit rate", f"{s['token_hit_rate']:.1%}"),
        ("requests with a repeated prefix", f"{value('prefix_hits', s)} ({s['request_hit_rate']:.1%})"
         + (f", {value('prefix_unknown', s)} unknown (store skipped)" if s.get("prefix_unknown") else "")),
        ("input / cached / cache-write / output tokens", " / ".join(value(n, s) for n in TOKEN_ROW)),
        ("unpriced requests", value("unpriced", s)),
        ("unanalysed requests", value("unanalysed", s)),
        ("errors", value("errors", s)),
        ("rewritten requests", value("rewritten", s)),
    ]
    rows += [(c.name.replace("_", " "), value(c.name, s)) for c in COUNTERS if c.shown and c.name not in PLACED]
    return rows


def render_table(summary: dict[str, Any]) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=140, force_terminal=False, color_system=None)
    totals = Table(title="prefixgate — cost summary", show_header=False)
    totals.add_column("what")
    totals.add_column("value", justify="right")
    for row in total_rows(summary):
        totals.add_row(*row)
    console.print(totals)
    models = Table(title="per model")
    for col in ("provider", "model", "requests", "hit rate", "spent", "saved", "missed", "unpriced"):
        models.add_column(col, justify="left" if col in ("provider", "model") else "right")
    for m in summary["models"]:
        models.add_row(m["provider"] or "", m["model"] or "(none)", f"{m['requests']:,}", f"{m['token_hit_rate']:.1%}",
                       usd(m["cost_usd"]), usd(m["saved_usd"]), usd(m["missed_usd"]), str(m["unpriced"]))
    console.print(models)
    if summary["miss_reasons"]:
        reasons = Table(title="miss reasons")
        for col in ("reason", "requests", "missed"):
            reasons.add_column(col, justify="left" if col == "reason" else "right")
        for r in summary["miss_reasons"]:
            reasons.add_row(r["reason"], f"{r['count']:,}", usd(r["missed_usd"]))
        console.print(reasons)
    if summary.get("rewrites"):
        rewrites = Table(title="rewrites")
        rewrites.add_column("rewrite")
        rewrites.add_column("requests", justify="right")
        for rewrite, n in summary["rewrites"].items():
            rewrites.add_row(rewrite, f"{n:,}")
        console.print(rewrites)
    return buf.getvalue()


def render_csv(summary: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for m in summary["models"]:
        writer.writerow(m)
    return buf.getvalue()


@click.command("report")
@click.option("--ledger", "ledger", default=None, help="SQLite ledger (default: the one `serve` writes).")
@click.option("--since", default=None, help="24h, 7d, 30m, or an ISO time; default all.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole summary as JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the per-model rows as CSV.")
def report_command(ledger: str | None, since: str | None, as_json: bool, as_csv: bool) -> None:
    """Cost and savings summary from the ledger."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    path = ledger or ProxyConfig().ledger_path
    summary = load_summary(path, since)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif as_csv:
        sys.stdout.write(render_csv(summary))
    else:
        click.echo(render_table(summary), nl=False)
