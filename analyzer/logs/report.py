"""An :class:`~analyzer.logs.analysis.LogAnalysis` → a JSON-ready summary, advice and a text report.

Advice sentences name the field, the offset and the share of requests, e.g. "the time of
day at messages[0].content offset 1,204 forks 93% of requests". Percentages are of the
analysed requests. The allowed hit rate is over the same requests as the realised one
(those with usage), so realised never exceeds it; rows without prefix information are
counted apart. Money is formatted by :func:`analyzer.cost.format_usd`, as everywhere. This
module computes nothing new from the log.
"""

from __future__ import annotations

from typing import Any

from analyzer.cost import format_usd
from analyzer.divergence import CAUSES
from analyzer.logs.analysis import LogAnalysis
from analyzer.logs.tallies import Totals


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def forks(a: LogAnalysis) -> list[dict[str, Any]]:
    analysed = max(1, a.total.requests)
    rows = sorted(a.forks.values(), key=lambda s: -s.count)
    return [
        {
            "field": s.field,
            "kind": s.kind,
            "where": s.where,
            "count": s.count,
            "share": s.count / analysed,
            "offset": s.offsets.most_common(1)[0][0],
            "example": s.example,
        }
        for s in rows[:20]
    ]


def advice(a: LogAnalysis, summary: dict[str, Any]) -> list[str]:
    out = []
    for f in summary["forks"][:5]:
        if f["share"] < 0.01:
            continue
        what = f"the {CAUSES[f['kind']]}" + (
            f" `{f['example'][:32]}`" if f["kind"] != "content" and f["example"] else ""
        )
        out.append(
            f"{what[0].upper()}{what[1:]} at {f['field']} offset {f['offset']:,} forks {f['share']:.0%} of requests "
            f"({f['count']:,}); move it after the stable prefix (into the last message)."
        )
    volatile = summary["money"].get("missed_volatile_usd")
    if out and volatile:
        out.append(
            f"Prompts that repeated but for such values missed {format_usd(volatile)} of cache savings "
            "(`prefixgate serve --rewrite aggressive` moves them out of the prefix)."
        )
    hr = summary["hit_rate"]
    if hr["realized"] is not None and hr["allowed"] is not None and hr["allowed"] - hr["realized"] >= 0.05:
        money = summary["money"]
        extra = (
            f": about {format_usd(money['missed_usd'])} more could be saved"
            if money["priced"] and money["missed_usd"]
            else ""
        )
        out.append(
            f"The providers' caching rules allow {hr['allowed']:.0%} of input tokens from cache; "
            f"the usage reports {hr['realized']:.0%}{extra}."
        )
    if a.no_breakpoint:
        out.append(
            f"{a.no_breakpoint:,} Anthropic request(s) repeat a cacheable prefix but set no cache_control breakpoint; "
            "add one at the end of the stable prefix (Anthropic caches nothing without it)."
        )
    if a.expired:
        out.append(
            f"{a.expired:,} request(s) repeated a prefix only after the cache TTL had passed; "
            "a 1-hour TTL (Anthropic) or steadier traffic would keep it warm."
        )
    if a.below_minimum:
        out.append(
            f"{a.below_minimum:,} request(s) repeat a prefix shorter than the provider's minimum "
            "(1,024 tokens on OpenAI and most Claude models), so nothing of it is cached."
        )
    return out


def _allowed(t: Totals) -> float | None:
    """The allowed rate over the requests the realised one covers (those with usage), so the
    two compare like for like; over every request (input estimated) when none has usage."""
    return (
        _rate(t.allowed_with_usage, t.usage_input_tokens)
        if t.with_usage
        else _rate(t.allowed_tokens, t.input_tokens)
    )


def summarize(a: LogAnalysis, errors: list[str], sources: list[str]) -> dict[str, Any]:
    t = a.total
    by_provider = {
        p: {
            "requests": v.requests,
            "input_tokens": v.input_tokens,
            "allowed_tokens": v.allowed_tokens,
            "cached_tokens": v.cached_tokens,
            "allowed": _allowed(v),
            "realized": _rate(v.cached_tokens, v.usage_input_tokens),
        }
        for p, v in sorted(a.by_provider.items())
    }
    priced = a.cfg.prices is not None
    # missed: null (never $0) when requests could have missed money but none of them had a price
    missed_known = priced and not (a.missed_unknown and not a.missed_priced)
    summary: dict[str, Any] = {
        "sources": sources,
        "requests": t.requests + a.unanalysed + a.prefix_unknown,
        "analysed": t.requests + a.prefix_unknown,
        "unanalysed": a.unanalysed,
        "prefix_unknown": a.prefix_unknown,
        "input_errors": len(errors),
        "input_tokens": t.input_tokens,
        "requests_with_usage": t.with_usage,
        "tree_nodes": len(a.tree),
        "distinct_prefixes": sum(1 for _ in a.tree.branch_points()),
        "top_prefixes": a.top_prefixes(),
        # realised ≤ allowed: both over the requests with usage (allowed_all_requests: over every request)
        "hit_rate": {
            "allowed": _allowed(t),
            "realized": _rate(t.cached_tokens, t.usage_input_tokens),
            "allowed_all_requests": _rate(t.allowed_tokens, t.input_tokens),
            "by_provider": by_provider,
        },
        # spent/saved come from reported usage: with no priced usage in the log they are unknown (null), never $0
        "money": {
            "priced": priced,
            "spent_usd": a.spent if priced and a.costed else None,
            "saved_usd": a.saved if priced and a.costed else None,
            "missed_usd": a.missed if missed_known else None,
            "missed_volatile_usd": a.missed_volatile if missed_known else None,
            "unpriced_requests": sum(a.unpriced.values()),
            "unpriced_models": sorted(a.unpriced),
            "flagged_requests": a.flagged,
        },
        # usage the model's rules do not expect: priced null (the proxy's rules_drift), per model and note
        "rules_drift": {
            "requests": a.drifted,
            "by_field": [{"model": m, "note": n, "requests": c} for (m, n), c in a.drift.most_common(20)],
        },
        "forks": forks(a),
        "forked_requests": a.forked_requests,
        "unexplained_forks": a.unexplained_forks,
        "expired_repeats": a.expired,
        "below_minimum": a.below_minimum,
        "errors": errors[:50],
    }
    summary["advice"] = advice(a, summary)
    return summary


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def render(s: dict[str, Any]) -> str:
    lines = [
        f"requests {s['requests']:,} (analysed {s['analysed']:,}, unanalysed {s['unanalysed']:,}, with usage {s['requests_with_usage']:,})"
        + (
            f"; {s['prefix_unknown']:,} without prefix information (the proxy's store was skipped), counted apart"
            if s["prefix_unknown"]
            else ""
        ),
        f"input tokens {s['input_tokens']:,}; prefix tree {s['tree_nodes']:,} nodes, {s['distinct_prefixes']:,} distinct repeated prefixes",
        "",
    ]
    hr = s["hit_rate"]
    lines.append(
        f"cache hit rate (share of input tokens): allowed by the providers' rules {_pct(hr['allowed'])}, realised {_pct(hr['realized'])}"
    )
    for p, v in hr["by_provider"].items():
        lines.append(
            f"  {p:<10} requests {v['requests']:>9,}  allowed {_pct(v['allowed']):>7}  realised {_pct(v['realized']):>7}"
        )
    m = s["money"]
    if m["priced"]:
        spent = (
            f"spent {format_usd(m['spent_usd'])}, saved by caching {format_usd(m['saved_usd'])}"
            if m["spent_usd"] is not None
            else "spent and saved n/a (no priced usage in the log)"
        )
        lines += [
            "",
            f"{spent}, missed savings {format_usd(m['missed_usd'])}"
            + (
                f" ({m['unpriced_requests']:,} requests of unpriced models: {', '.join(m['unpriced_models'][:5])})"
                if m["unpriced_requests"]
                else ""
            ),
        ]
    drift = s.get("rules_drift") or {}
    if drift.get("requests"):
        lines += [
            "",
            f"rules drift: {drift['requests']:,} request(s) report usage the rules do not expect (priced null); "
            "update analyzer/prices.json (--prices) or analyzer/cache_rules / analyzer/usage.py",
        ]
        lines += [
            f"  {d['model'][:28]:<28} {d['note']:<48} {d['requests']:>7,}" for d in drift["by_field"][:10]
        ]
    if s["top_prefixes"]:
        lines += [
            "",
            "top repeated prefixes          count   tokens  share of input  model                        first seen",
        ]
        for p in s["top_prefixes"]:
            lines.append(
                f"  ends at {p['ends_at']:<22} {p['count']:>6,} {p['tokens']:>8,}  {p['share_of_input']:>13.1%}  {p['model'][:28]:<28} line {p['first_line']:,}"
            )
    if s["forks"]:
        lines += ["", "where prefixes fork (before the last message)"]
        for f in s["forks"][:10]:
            lines.append(
                f"  {f['where']:<7} {f['field']:<28} offset {f['offset']:>7,}  {CAUSES[f['kind']]:<26} {f['count']:>7,} ({f['share']:.0%})"
            )
    if s["advice"]:
        lines += ["", "advice"] + [f"  - {a}" for a in s["advice"]]
    return "\n".join(lines)
