"""``prefixgate report``'s text tables: a summary (:func:`proxy.reporting.summary.summarize`) as
tables that fit 80 columns, whatever the terminal, long names folding inside their cell.

The totals (every shown counter of :data:`proxy.accounting.counters.COUNTERS`, formatted by its
kind; money by :func:`analyzer.cost.format_usd`, as everywhere, the dashboard's JS mirroring it),
one row per model that billed, per upstream when more than one appears, the requests that billed
nothing, the miss reasons, the provider's own, the rules drift and the rewrites. Names from
upstream answers are escaped: ``iterations[x]`` is text, never rich markup.

It reads no ledger and writes nowhere but the string it returns. See docs/dashboard.md.
"""

from __future__ import annotations

import io
from typing import Any

from analyzer.cost import format_usd as usd
from proxy.accounting.counters import BY_NAME, COUNTERS

WIDTH = 80
MONEY_COLUMNS = ("requests", "hit rate", "spent", "saved", "missed")

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
    (by its name), so a counter added to the table is printed without a change here. The
    explicit-cache storage rows appear only where ``--gemini-auto-cache`` kept caches."""
    billable = f" ({value('billable', s)} billable)" if "billable" in s else ""
    rows = [
        ("requests", value("requests", s) + billable),
        ("spent", value("cost_usd", s)),
        ("saved by caching", value("saved_usd", s)),
        ("missed savings", value("missed_usd", s)),
    ]
    if s.get("cache_storage_usd"):
        rows += [
            ("explicit-cache storage", value("cache_storage_usd", s)),
            ("saved net of storage", value("net_saved_usd", s)),
        ]
    rows += [
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
    """A titled table whose ``right`` columns (numbers) never wrap; the others fold their text."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    for col in columns:
        if col in right:
            table.add_column(col, justify="right", no_wrap=True)
        else:
            table.add_column(col, overflow="fold", ratio=1, min_width=12)
    return table


def _money_cells(row: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"{row['requests']:,}",
        f"{row['token_hit_rate']:.1%}",
        usd(row["cost_usd"]),
        usd(row["saved_usd"]),
        usd(row["missed_usd"]),
    )


def _totals(console, summary: dict[str, Any]) -> None:
    from rich.table import Table

    totals = Table(title="prefixgate — cost summary", show_header=False)
    totals.add_column("what", overflow="fold")
    totals.add_column("value", justify="right", overflow="fold")
    for row in total_rows(summary):
        totals.add_row(*row)
    console.print(totals)


def _models(console, summary: dict[str, Any]) -> None:
    """One row per model that billed; a model name two providers share, or none, is prefixed by
    its provider."""
    models = _table("per model (requests that billed)", "model", *MONEY_COLUMNS, right=MONEY_COLUMNS)
    names = [m["model"] for m in summary["models"]]
    shared = {name for name in names if names.count(name) > 1}
    for m in summary["models"]:
        name = m["model"] or "(none)"
        if name in shared or m["model"] is None:
            name = f"{m['provider']}/{name}"
        if m.get("priced_as"):
            name += f" ({m['priced_as']})"
        elif m["unpriced"] and m["cost_usd"] is None:
            name += " (unpriced)"
        models.add_row(name, *_money_cells(m))
    console.print(models)


def _upstreams(console, summary: dict[str, Any]) -> None:
    upstreams = summary.get("upstreams") or {}
    if len(upstreams) < 2:
        return
    table = _table("per upstream", "upstream", *MONEY_COLUMNS, right=MONEY_COLUMNS)
    for name, u in sorted(upstreams.items(), key=lambda kv: (-kv[1]["requests"], kv[0])):
        table.add_row(name, *_money_cells(u))
    console.print(table)


def _not_billable(console, summary: dict[str, Any]) -> None:
    if not summary.get("not_billable"):
        return
    columns = ("route", "requests", "errors", "models")
    quiet = _table("billed nothing (no usage reported)", *columns, right=("requests", "errors"))
    for r in summary["not_billable"]:
        quiet.add_row(
            f"{r['method']} {r['route']}".strip(),
            f"{r['requests']:,}",
            f"{r['errors']:,}",
            ", ".join(r["models"]) or "—",
        )
    console.print(quiet)


def _miss_reasons(console, summary: dict[str, Any]) -> None:
    if not summary["miss_reasons"]:
        return
    reasons = _table("miss reasons", "reason", "requests", "missed", right=("requests", "missed"))
    for r in summary["miss_reasons"]:
        reasons.add_row(r["reason"], f"{r['count']:,}", usd(r["missed_usd"]))
    console.print(reasons)


def _provider_misses(console, summary: dict[str, Any]) -> None:
    from rich.markup import escape

    misses = summary.get("provider_miss_reasons") or {}
    if not misses:
        return
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


def _rules_drift(console, summary: dict[str, Any]) -> None:
    from rich.markup import escape

    if not summary.get("rules_drift"):
        return
    title = "rules drift: usage the rules do not expect (priced null)"
    drift = _table(title, "model", "field", "requests", right=("requests",))
    for r in summary["rules_drift"]:
        drift.add_row(
            escape(f"{r['provider']}/{r['model'] or '(none)'}"),
            escape(f"{r['field']} ({r['why']})" if r["why"] else r["field"]),
            f"{r['count']:,}",
        )
    console.print(drift)
    updates = list(dict.fromkeys(r["update"] for r in summary["rules_drift"]))
    console.print("to fix: " + "; ".join(updates), overflow="fold", markup=False)


def _rewrites(console, summary: dict[str, Any]) -> None:
    if not summary.get("rewrites"):
        return
    rewrites = _table("rewrites", "rewrite", "requests", right=("requests",))
    for rewrite, n in summary["rewrites"].items():
        rewrites.add_row(rewrite, f"{n:,}")
    console.print(rewrites)


SECTIONS = (
    _totals,
    _models,
    _upstreams,
    _not_billable,
    _miss_reasons,
    _provider_misses,
    _rules_drift,
    _rewrites,
)


def render_table(summary: dict[str, Any], width: int = WIDTH) -> str:
    """The summary as text tables that fit ``width`` columns (long names fold inside their cell)."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    for section in SECTIONS:
        section(console, summary)
    return buf.getvalue()
