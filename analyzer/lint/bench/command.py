"""``prefixgate bench lint``: volatile-value detection before vs after, and the whole lint.

    prefixgate bench lint [--prompts 1000] [--size 20KB] [--json]

On the same generated prompts (:mod:`.prompts`): **detect** (ms per prompt, :mod:`.legacy_detect`
vs :func:`analyzer.detect.find_volatile`, best of three passes after a warm-up, and the ratio),
**lint in process** (files per second) and **lint command** (a fresh ``prefixgate lint FOLDER``,
start-up included). Prints one JSON object and a table.

Targets (issue 12): ≤ 1 ms per 20 KB prompt, 1,000 prompts in ≤ 2 s. See docs/measured.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import click

from analyzer.detect import find_volatile
from analyzer.lint.bench import legacy_detect
from analyzer.lint.bench.prompts import prompts
from analyzer.lint.config import resolve
from analyzer.lint.engine import run as run_rules
from analyzer.lint.inputs import load
from analyzer.sizes import parse_bytes


def _pass(fn, texts: list[str]) -> tuple[list[float], int]:
    times, found = [], 0
    for t in texts:
        t0 = time.perf_counter()
        found += len(fn(t))
        times.append((time.perf_counter() - t0) * 1e3)
    return times, found


def _detect(texts: list[str], passes: int = 3) -> dict:
    """Each detector over every prompt, ``passes`` times in turn (before, after, before, …);
    per prompt the fastest of its passes counts, so a busy moment on a shared machine
    does not decide the figure."""
    for t in texts[:5]:  # warm-up: compiled patterns, caches
        legacy_detect.find_volatile(t)
        find_volatile(t)
    before = [float("inf")] * len(texts)
    after = [float("inf")] * len(texts)
    for _ in range(passes):
        times, found_before = _pass(legacy_detect.find_volatile, texts)
        before = [min(a, b) for a, b in zip(before, times)]
        times, found_after = _pass(find_volatile, texts)
        after = [min(a, b) for a, b in zip(after, times)]
    mean_before, mean_after = statistics.fmean(before), statistics.fmean(after)
    return {
        "before_ms": round(mean_before, 3),
        "after_ms": round(mean_after, 3),
        "before_p50_ms": round(statistics.median(before), 3),
        "after_p50_ms": round(statistics.median(after), 3),
        "speedup": round(mean_before / mean_after, 1),
        "findings_before": found_before,
        "findings_after": found_after,
    }


def measure(n: int, size: int) -> dict:
    texts = prompts(n, size)
    result = {"prompts": n, "prompt_bytes": size, "detect": _detect(texts)}
    with tempfile.TemporaryDirectory(prefix="pg-bench-lint-") as folder:
        for i, text in enumerate(texts):
            with open(os.path.join(folder, f"prompt_{i:05d}.md"), "w", encoding="utf-8") as f:
                f.write(text)
        codes = resolve(["DEFAULT"], [])
        t = time.perf_counter()
        findings = run_rules(load([folder]), codes)
        in_process = time.perf_counter() - t
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "proxy.cli", "lint", "--exit-zero", "-o", os.devnull, folder],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        command = time.perf_counter() - t
    result["lint_in_process"] = {
        "seconds": round(in_process, 3),
        "files_per_s": round(n / in_process),
        "ms_per_file": round(in_process / n * 1e3, 3),
        "findings": len(findings),
    }
    result["lint_command"] = {
        "seconds": round(command, 3),
        "files_per_s": round(n / command),
        "exit_code": proc.returncode,
    }
    result["targets_met"] = {
        "detect_ms_per_20kb<=1": result["detect"]["after_ms"] * 20_480 / size <= 1.0,
        "1000_files<=2s": command * 1000 / n <= 2.0 and proc.returncode == 0,
    }
    return result


def _table(r: dict) -> str:
    d, lp, lc = r["detect"], r["lint_in_process"], r["lint_command"]
    rows = [
        ("what", "before", "after", "ratio"),
        (
            f"detect, ms per {r['prompt_bytes'] // 1024} KB prompt (mean)",
            f"{d['before_ms']:.3f}",
            f"{d['after_ms']:.3f}",
            f"{d['speedup']}x",
        ),
        ("detect, ms per prompt (median)", f"{d['before_p50_ms']:.3f}", f"{d['after_p50_ms']:.3f}", ""),
        ("values found in all prompts", str(d["findings_before"]), str(d["findings_after"]), ""),
        (
            f"lint in process, {r['prompts']} files",
            "",
            f"{lp['seconds']:.2f} s ({lp['files_per_s']} files/s)",
            "",
        ),
        (
            f"`prefixgate lint` on {r['prompts']} files, start-up included",
            "",
            f"{lc['seconds']:.2f} s ({lc['files_per_s']} files/s)",
            "",
        ),
    ]
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)).rstrip() for row in rows)


@click.command("lint")
@click.option(
    "--prompts",
    "n",
    default=1000,
    show_default=True,
    type=click.IntRange(10, 100_000),
    help="Prompts to generate.",
)
@click.option("--size", default="20KiB", show_default=True, help="Size of each prompt (e.g. 20KiB).")
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON object (no table).")
def bench_lint_command(n: int, size: str, as_json: bool) -> None:
    """Time volatile-value detection (before vs after the one-pass scan) and `prefixgate lint` on generated prompts."""
    result = measure(n, int(parse_bytes(size)))
    click.echo(json.dumps(result, indent=2))
    if not as_json:
        click.echo(_table(result))
