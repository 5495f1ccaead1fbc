"""``prefixgate report``: the cost and savings summary of a ledger, in the terminal.

Reads the SQLite ledger read-only (a running proxy may keep writing it; ``--ledger`` given
several times reads several replicas' ledgers as one) and prints the
same summary the dashboard shows (:func:`proxy.reporting.summary.summarize`) as tables that
fit 80 columns: the totals (every shown counter of :data:`proxy.accounting.counters.COUNTERS`,
formatted by its kind; money by :func:`analyzer.cost.format_usd`), one row per model that
billed something, one row per upstream (the configured name the requests came through)
when more than one appears, the requests that billed nothing by route, the miss reasons, the
provider's own miss reasons (requests, missed tokens and dollars, how often prefixgate agreed),
the rules drift (what to update) and the requests per rewrite id; ``--json`` prints the
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
from pathlib import Path
from typing import Any

import click

from analyzer.cost import format_usd
from analyzer.logs.ledger_columns import COLUMNS
from proxy.accounting.counters import BY_NAME, COUNTERS
from proxy.accounting.ledger import LedgerError, connect
from proxy.config import ProxyConfig
from proxy.reporting.summary import parse_since, summarize

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


usd = format_usd  # one money format everywhere (analyzer.cost.format_usd; the dashboard's JS mirrors it)
WIDTH = 80  # the table fits an 80-column terminal, whatever the terminal


MAX_LEDGERS = 10  # SQLite attaches at most 10 databases to one connection


def open_ledgers(paths: list[str]) -> sqlite3.Connection:
    """One read-only connection whose ``requests`` are every ledger's rows (several replicas'
    ledgers read as one): the ledgers are attached and joined in a temporary view, a column
    an older ledger lacks reading as NULL. LedgerError for a missing file or a database that
    is no ledger."""
    if len(paths) == 1:
        return connect(paths[0], readonly=True)
    if len(paths) > MAX_LEDGERS:
        raise LedgerError(f"at most {MAX_LEDGERS} ledgers at once, got {len(paths)}")
    conn = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
    selects = []
    for i, path in enumerate(paths):
        if not Path(path).exists():
            raise LedgerError(f"ledger {path}: no such file")
        conn.execute(f"ATTACH DATABASE ? AS l{i}", (f"file:{path}?mode=ro",))
        present = {row[1] for row in conn.execute(f"PRAGMA l{i}.table_info(requests)")}
        if not present:
            raise LedgerError(f"ledger {path}: not a prefixgate ledger (no requests table)")
        cols = ", ".join(c if c in present else f"NULL AS {c}" for c in COLUMNS)
        selects.append(f"SELECT {cols} FROM l{i}.requests")
    conn.execute("CREATE TEMP VIEW requests AS " + " UNION ALL ".join(selects))
    return conn


def load_summary(ledgers: str | list[str], since: str | None) -> dict[str, Any]:
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


# The counters the totals table places on its own rows (the rest follow, by name).
TOKEN_ROWS = (
    ("input tokens", "input_tokens"),
    ("cached tokens", "cached_tokens"),
    ("cache-write tokens", "cache_write_tokens"),
    ("output tokens", "output_tokens"),
)
PLACED = {
    "requests",
    "billable",
    "cost_usd",
    "saved_usd",
    "missed_usd",
    "prefix_hits",
    "prefix_unknown",
    *(name for _, name in TOKEN_ROWS),
    "unpriced",
    "unanalysed",
    "errors",
    "rewritten",
    "cache_storage_usd",
    "net_saved_usd",
    "rules_drift_rows",
}


def value(name: str, summary: dict[str, Any]) -> str:
    """A counter's value as the report prints it: by the counter's kind in the table."""
    v = summary[name]
    return usd(v) if BY_NAME[name].kind == "usd" else f"{v:,}"


def total_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The totals table: the familiar rows first, then each shown counter they do not place
    (by its name), so a counter added to the table is printed without a change here."""
    rows = [
        (
            "requests",
            value("requests", s) + (f" ({value('billable', s)} billable)" if "billable" in s else ""),
        ),
        ("spent", value("cost_usd", s)),
        ("saved by caching", value("saved_usd", s)),
        ("missed savings", value("missed_usd", s)),
        *(
            [
                ("explicit-cache storage", value("cache_storage_usd", s)),
                ("saved net of storage", value("net_saved_usd", s)),
            ]
            if s.get("cache_storage_usd")
            else []
        ),  # only where --gemini-auto-cache kept caches
        ("token hit rate", f"{s['token_hit_rate']:.1%}"),
        ("requests with a repeated prefix", f"{value('prefix_hits', s)} ({s['request_hit_rate']:.1%})"),
    ]
    if s.get("prefix_unknown"):
        rows.append(("prefix unknown (store skipped)", value("prefix_unknown", s)))
    rows += [(label, value(name, s)) for label, name in TOKEN_ROWS]
    rows += [
        ("unpriced requests", value("unpriced", s)),
        ("unanalysed requests", value("unanalysed", s)),
        ("errors", value("errors", s)),
        ("rewritten requests", value("rewritten", s)),
    ]
    if s.get("rules_drift_rows"):
        rows.append(("rules drift (priced null)", value("rules_drift_rows", s)))
    rows += [
        (c.name.replace("_", " "), value(c.name, s)) for c in COUNTERS if c.shown and c.name not in PLACED
    ]
    return rows


def _table(title: str, *columns: str, right: tuple[str, ...] = ()):
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    for col in columns:  # numbers never wrap; the names fold inside their cell instead
        if col in right:
            table.add_column(col, justify="right", no_wrap=True)
        else:
            table.add_column(col, overflow="fold", ratio=1, min_width=12)
    return table


def render_table(summary: dict[str, Any], width: int = WIDTH) -> str:
    """The summary as text tables that fit ``width`` columns (long names fold inside their cell)."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    totals = Table(title="prefixgate — cost summary", show_header=False)
    totals.add_column("what", overflow="fold")
    totals.add_column("value", justify="right", overflow="fold")
    for row in total_rows(summary):
        totals.add_row(*row)
    console.print(totals)
    money = ("requests", "hit rate", "spent", "saved", "missed")
    models = _table("per model (requests that billed)", "model", *money, right=money)
    dup = {m["model"] for m in summary["models"]}
    dup = {name for name in dup if sum(1 for m in summary["models"] if m["model"] == name) > 1}
    for m in summary["models"]:
        name = m["model"] or "(none)"
        if name in dup or m["model"] is None:
            name = f"{m['provider']}/{name}"
        if m.get("priced_as"):
            name += f" ({m['priced_as']})"
        elif m["unpriced"] and m["cost_usd"] is None:
            name += " (unpriced)"
        models.add_row(
            name,
            f"{m['requests']:,}",
            f"{m['token_hit_rate']:.1%}",
            usd(m["cost_usd"]),
            usd(m["saved_usd"]),
            usd(m["missed_usd"]),
        )
    console.print(models)
    upstreams = summary.get("upstreams") or {}
    if len(upstreams) > 1:
        table = _table("per upstream", "upstream", *money, right=money)
        for name, u in sorted(upstreams.items(), key=lambda kv: (-kv[1]["requests"], kv[0])):
            table.add_row(
                name,
                f"{u['requests']:,}",
                f"{u['token_hit_rate']:.1%}",
                usd(u["cost_usd"]),
                usd(u["saved_usd"]),
                usd(u["missed_usd"]),
            )
        console.print(table)
    if summary.get("not_billable"):
        quiet = _table(
            "billed nothing (no usage reported)",
            "route",
            "requests",
            "errors",
            "models",
            right=("requests", "errors"),
        )
        for r in summary["not_billable"]:
            quiet.add_row(
                f"{r['method']} {r['route']}".strip(),
                f"{r['requests']:,}",
                f"{r['errors']:,}",
                ", ".join(r["models"]) or "—",
            )
        console.print(quiet)
    if summary["miss_reasons"]:
        reasons = _table("miss reasons", "reason", "requests", "missed", right=("requests", "missed"))
        for r in summary["miss_reasons"]:
            reasons.add_row(r["reason"], f"{r['count']:,}", usd(r["missed_usd"]))
        console.print(reasons)
    from rich.markup import escape  # names from upstream answers: "iterations[x]" is text, not markup

    misses = summary.get("provider_miss_reasons") or {}
    if misses:
        cols = ("requests", "tokens", "missed", "agrees")
        table = _table("the provider's miss reasons (diagnostics)", "reason", *cols, right=cols)
        for reason, m in misses.items():
            table.add_row(
                escape(reason),
                f"{m['requests']:,}",
                f"{m['missed_tokens']:,}",
                usd(m["missed_usd"]),
                f"{m['agrees']:,}/{m['requests']:,}",
            )
        console.print(table)
    if summary.get("rules_drift"):
        drift = _table(
            "rules drift: usage the rules do not expect (priced null)",
            "model",
            "field",
            "requests",
            right=("requests",),
        )
        for r in summary["rules_drift"]:
            drift.add_row(
                escape(f"{r['provider']}/{r['model'] or '(none)'}"),
                escape(f"{r['field']} ({r['why']})" if r["why"] else r["field"]),
                f"{r['count']:,}",
            )
        console.print(drift)
        updates = list(dict.fromkeys(r["update"] for r in summary["rules_drift"]))
        console.print("to fix: " + "; ".join(updates), overflow="fold", markup=False)
    if summary.get("rewrites"):
        rewrites = _table("rewrites", "rewrite", "requests", right=("requests",))
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
