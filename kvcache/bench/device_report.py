"""The device suite's result judged and shown: ``aims`` (each figure against the issue's aim on the
reference machine) and ``render``, a plain-text table (no rich: the GPU machine may not have it).

One line per figure with its aim beside it, then the pool's banner and where each part's time went. It
measures nothing; it reads ``bench.device_suite.run_suite``'s dict.
"""

from __future__ import annotations

REFERENCE = "one H200, bf16, the llama-3-8b shape"


def aims(r: dict) -> dict:
    """The issue's aims on the reference, each measured value against its bound (``applies``: this run is
    the reference workload)."""
    decode, batches = r["decode"], {row["batch"]: row for row in r["decode"]["batches"]}
    logits = r["transformers"].get("logits")
    pool = r["pool"]
    out = {
        "reference": REFERENCE,
        "applies": r["dtype"] == "bf16" and r["shape"] == "llama-3-8b" and r["device"] != "cpu",
        "batch_1_share_of_ceiling_ge_0.70": _aim(decode["share_of_ceiling"], lambda v: v >= 0.70),
        "vs_transformers_ge_2": _aim(decode.get("vs_transformers"), lambda v: v >= 2),
        "batch_32_over_batch_1_ge_15": _aim(batches.get(32, {}).get("over_batch_1"), lambda v: v >= 15),
        "warm_ttft_le_0.1_cold": _aim(r["ttft"]["warm_over_cold"], lambda v: v <= 0.1),
        "pool_within_5pct_of_formula": _aim(pool["held_over_formula"], lambda v: abs(v - 1) <= 0.05),
        "greedy_identical_to_unbatched": _aim(r["identity"]["identical"], bool),
        "logits_within_tolerance": _aim(
            logits and logits["max_abs_diff"], lambda v: logits["within_tolerance"]
        ),
    }
    return out


def _aim(value, test) -> dict:
    return {"value": value, "met": None if value is None else bool(test(value))}


def _f(value, spec: str = ".1f", unit: str = "") -> str:
    return "—" if value is None else f"{format(value, spec)}{unit}"


def _cut(text: str, most: int = 70) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _verdict(result: dict, key: str) -> str:
    aim = result["aims"][key]
    if aim["met"] is None:
        return "—"
    return "met" if aim["met"] else "NOT met"


def render(r: dict) -> str:
    d, t, p, i = r["decode"], r["ttft"], r["pool"], r["identity"]
    hf = r["transformers"]
    rows = [
        ("decode tok/s at batch 1", _f(d["batch_1_tokens_per_s"]), ""),
        (
            f"share of the ceiling ({_f(r['copy_bandwidth_gb_per_s'], '.0f')} GB/s copy ÷ "
            f"{r['weight_bytes'] / 1e9:.2f} GB of weights = {_f(r['ceiling_tokens_per_s'])} tok/s)",
            _f(d["share_of_ceiling"] and 100 * d["share_of_ceiling"], ".0f", "%"),
            _verdict(r, "batch_1_share_of_ceiling_ge_0.70") + " (≥ 70%)",
        ),
        (
            "transformers.generate() tok/s, same weights and device",
            _f(hf.get("decode_tokens_per_s")) if "skipped" not in hf else _cut(hf["skipped"]),
            "",
        ),
        (
            "ours / transformers",
            _f(d.get("vs_transformers"), ".2f", "×"),
            _verdict(r, "vs_transformers_ge_2") + " (≥ 2×)",
        ),
    ]
    for row in d["batches"]:
        aim = _verdict(r, "batch_32_over_batch_1_ge_15") + " (≥ 15×)" if row["batch"] == 32 else ""
        rows.append(
            (
                f"aggregate tok/s at batch {row['batch']}",
                f"{row['tokens_per_s']:.1f} ({_f(row['over_batch_1'], '.1f')}× batch 1)",
                aim,
            )
        )
    rows += [
        (
            f"TTFT cold / warm, {t['prefix_tokens']}-token shared prefix",
            f"{t['cold_s'] * 1000:.1f} / {t['warm_s'] * 1000:.1f} ms = {t['warm_over_cold']:.3f}",
            _verdict(r, "warm_ttft_le_0.1_cold") + " (≤ 0.1)",
        ),
        (
            f"{p['conversation_tokens']}-token conversations the pool holds / the formula",
            f"{p['held_conversations']} / {p['formula_conversations']}",
            _verdict(r, "pool_within_5pct_of_formula") + " (within 5%)",
        ),
        (
            f"greedy batch of {i['batch']} identical to each alone ({i['tokens']} tokens)",
            f"{i['identical_rows']}/{i['batch']} rows"
            + (
                ""
                if i["max_gap_at_difference"] is None
                else f", logit gap at a difference ≤ {i['max_gap_at_difference']:.3g}"
            ),
            _verdict(r, "greedy_identical_to_unbatched"),
        ),
    ]
    if "logits" in hf:
        lg = hf["logits"]
        rows.append(
            (
                "logits vs transformers: max |diff| (tolerance)",
                f"{lg['max_abs_diff']:.3g} ({lg['tolerance']:.3g}; argmax agrees {lg['argmax_agreement'] * 100:.0f}%)",
                _verdict(r, "logits_within_tolerance"),
            )
        )
    if r.get("graph_steps") or r.get("graph_capture_error"):
        rows.append(
            (
                "decode steps on the static path / CUDA graphs captured",
                f"{r['graph_steps']} / {r.get('graphs_captured', 0)}",
                "capture FAILED, eager: " + _cut(r["graph_capture_error"])
                if r.get("graph_capture_error")
                else "",
            )
        )
    width = max(len(a) for a, _, _ in rows)
    value_width = max(len(b) for _, b, _ in rows)
    lines = [
        f"{r['shape']} (random weights), {r['dtype']} on {r['device']}; aims on {r['aims']['reference']}"
        + ("" if r["aims"]["applies"] else " (not this run's workload: shown for reference)"),
        *(f"  {a:<{width}}  {b:>{value_width}}  {c}" for a, b, c in rows),
        "  " + p["banner"],
        "  seconds: " + ", ".join(f"{k} {v}" for k, v in r["seconds"].items()),
    ]
    return "\n".join(lines)
