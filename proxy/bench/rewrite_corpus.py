"""``prefixgate bench rewrite --corpus DIR``: head reuse of ``off`` vs ``aggressive`` on labelled prompts.

Each prompt file under DIR (text and templates; source code in any language, JSON, and chat
templates whose spans sit in ``{% … %}`` statements skipped) with spans marked ``⟦…⟧`` is
rendered twice as a live app renders it (:func:`.rewrite_render.render` at each span), sent as the system prompt of an OpenAI Chat body through :func:`analyzer.rewrite.rewrite_request`,
and the two system prompts compared: head reuse is their shared leading share (common prefix over
the longer one, a moved value's marker read as one character). Reported per mode: the mean, the
share of prompts at ≥ 0.9; and values kept (each rendered value's words still in the rewritten
request) and the characters aggressive adds to a request. In process; nothing is sent anywhere.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from analyzer.lint.sources import COMPILED_SUFFIXES
from analyzer.rewrite import AGGRESSIVE, OFF, OPENAI_CHAT, rewrite_request
from analyzer.rewrite.volatile import MARKER
from proxy.bench.rewrite_render import render

OPEN, CLOSE = "⟦", "⟧"
#: what a live app sends as text; source code (scripting and compiled languages) and request
#: bodies are other readers' (lint): a live app sends what the code renders, never the code
SKIPPED = {".py", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".json", ".jsonl"}
SKIPPED |= {".ndjson", ".php", ".rb", ".swift", ".cpp", ".cc", ".c", ".h", ".scala", ".dart", ".lua"}
SKIPPED |= {".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd"}  # shell scripts echo what they send
SKIPPED |= COMPILED_SUFFIXES


def labelled(raw: str) -> tuple[list[str], list[str]]:
    """``raw`` cut at its marks: the text between spans (one more than spans) and the spans. A
    slot's name marked inside its braces (``{⟦chatname⟧}``) is the slot: the braces go with it."""
    between, spans, at = [], [], 0
    while True:
        i = raw.find(OPEN, at)
        j = raw.find(CLOSE, i + 1) if i >= 0 else -1
        if i < 0 or j < 0:
            between.append(raw[at:])
            return between, spans
        braced = raw[i - 1 : i] == "{" and raw[i - 2 : i - 1] not in ("{", "$") and raw[j + 1 : j + 2] == "}"
        between.append(raw[at : i - braced])
        spans.append("{" + raw[i + 1 : j] + "}" if braced else raw[i + 1 : j])
        at = j + 1 + braced


def prompts(folder: Path) -> list[tuple[str, list[str], list[str]]]:
    """(name, between, spans) of every labelled prompt file under ``folder``, in name order."""
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix.lower() in SKIPPED or path.name in ("SOURCE.md", "SOURCES.md"):
            continue
        try:
            raw = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        between, spans = labelled(raw)
        if spans and not any(_in_statement(b) for b in between[:-1]):
            out.append((str(path.relative_to(folder)), between, spans))
    return out


def _in_statement(before: str) -> bool:
    """A span inside a template statement (``{% set today = … %}``): template code, not a value
    an app renders into the prompt (chat templates are skipped)."""
    return before.rfind("{%") > before.rfind("%}") or before.rfind("{{") > before.rfind("}}")


def _shared(a: str, b: str) -> float:
    # the marker is the same text in both requests: only where the first difference falls counts
    a, b = a.replace(MARKER, "\x00"), b.replace(MARKER, "\x00")
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i / max(len(a), len(b), 1)


def _system(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m.get("role") == "system")


_PUNCT = ",.;:()[]{}\"'`"


def _kept(values: list[str], body: dict) -> int:
    """How many ``values`` are still in ``body``: whole, or word by word (a value the detector
    moved in parts, "3/5/2025" and "5:51:09 PM", each with its label, is kept)."""
    sent = json.dumps(body, ensure_ascii=False)
    raw = "".join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))
    return sum(
        1
        for v in values
        if json.dumps(v, ensure_ascii=False)[1:-1] in sent or all(w.strip(_PUNCT) in raw for w in v.split())
    )


def measure(folder: Path) -> dict:
    rows = []
    for name, between, spans in prompts(folder):
        systems: dict[str, list[str]] = {OFF: [], AGGRESSIVE: []}
        kept = {OFF: 0, AGGRESSIVE: 0}
        sizes = {OFF: 0, AGGRESSIVE: 0}
        for k in (0, 1):
            values = [render(v, k, before) for v, before in zip(spans, between)]
            text = "".join(x for pair in zip(between, values + [""]) for x in pair)
            body = {
                "model": "gpt-4o",
                "messages": [{"role": "system", "content": text}, {"role": "user", "content": "Hello."}],
            }
            for mode in (OFF, AGGRESSIVE):
                out = rewrite_request(OPENAI_CHAT, body, mode=mode).body or body
                systems[mode].append(_system(out))
                kept[mode] += _kept(values, out)
                sizes[mode] += len(json.dumps(out, ensure_ascii=False))
        rows.append(
            {
                "prompt": name,
                "spans": len(spans),
                "off": round(_shared(*systems[OFF]), 4),
                "aggressive": round(_shared(*systems[AGGRESSIVE]), 4),
                "values": 2 * len(spans),
                "kept": kept[AGGRESSIVE],
                "added_chars": (sizes[AGGRESSIVE] - sizes[OFF]) // 2,
            }
        )
    summary = {}
    for mode in (OFF, AGGRESSIVE):
        shares = [r[mode] for r in rows]
        summary[mode] = {
            "mean": round(statistics.fmean(shares), 4) if shares else None,
            "share_at_0.9": round(sum(s >= 0.9 for s in shares) / len(shares), 4) if shares else None,
        }
    values = sum(r["values"] for r in rows)
    kept = sum(r["kept"] for r in rows)
    return {
        "bench": "rewrite-corpus",
        "corpus": str(folder),
        "prompts": len(rows),
        "head_reuse": summary,
        "values": values,
        "values_kept": kept,
        "added_chars_mean": round(statistics.fmean(r["added_chars"] for r in rows), 1) if rows else None,
        "targets_met": {
            "aggressive_mean>=0.95": bool(rows) and summary[AGGRESSIVE]["mean"] >= 0.95,
            "aggressive_share_at_0.9>=0.9": bool(rows) and summary[AGGRESSIVE]["share_at_0.9"] >= 0.9,
            "no_value_lost": kept == values,
        },
        "rows": rows,
    }


def table(result: dict) -> str:
    h = result["head_reuse"]
    lines = [
        f"prefixgate bench rewrite --corpus {result['corpus']}: {result['prompts']} labelled prompts, each rendered twice",
        f"{'mode':<12}{'head reuse (mean)':>20}{'prompts at >= 0.9':>20}",
    ]
    for mode in (OFF, AGGRESSIVE):
        mean, share = h[mode]["mean"], h[mode]["share_at_0.9"]
        lines.append(
            f"{mode:<12}{mean if mean is None else f'{mean:.1%}':>20}{share if share is None else f'{share:.1%}':>20}"
        )
    lines.append(f"values kept by aggressive: {result['values_kept']} of {result['values']}")
    lines.append(
        f"characters aggressive adds per request (markers, moved block): {result['added_chars_mean']}"
    )
    worst = sorted(result["rows"], key=lambda r: r[AGGRESSIVE])[:5]
    lines += [f"  lowest: {r['prompt']} {r[AGGRESSIVE]:.1%}" for r in worst if r[AGGRESSIVE] < 0.9]
    return "\n".join(lines)
