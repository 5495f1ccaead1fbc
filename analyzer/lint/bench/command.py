"""``prefixgate bench lint``: detection before vs after and beside promptcachelint, and the whole lint.

    prefixgate bench lint [--prompts 1000] [--size 20KB] [--corpus DIR] [--half test] [--peer index] [--json]

On the same generated prompts (:mod:`.prompts`): **detect** (:mod:`.legacy_detect` vs
:func:`analyzer.detect.find_volatile`, best of three passes), **peer** (promptcachelint installed
for the run, :mod:`.peer`: the same prompts in the same run, and per file on the same folder, the best of
three passes for each),
**lint in process** and **lint command** (start-up included); **quality**: precision and recall on
a labelled corpus's half, ours beside the peer's. One JSON object and a table. See docs/measured.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from analyzer.detect import find_volatile
from analyzer.lint.bench import legacy_detect
from analyzer.lint.bench.corpus import HALVES, real, score_lint, score_spans
from analyzer.lint.bench.peer import PACKAGE, Peer, install
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


#: passes over the folder of files, ours and the peer's, each figure the best of them
FILE_PASSES = 3


def _peer_speed(peer: Peer, texts: list[str], folder: str, passes: int = 3) -> dict:
    """Ours and the peer on the same prompts, in turn, best of ``passes`` per prompt; per file
    (read, then detect) on the same folder."""
    for t in texts[:5]:
        peer.spans(t)
        peer.engine(t)
    ours = [float("inf")] * len(texts)
    every = [float("inf")] * len(texts)
    shipped = [float("inf")] * len(texts)
    for _ in range(passes):
        ours = [min(a, b) for a, b in zip(ours, _pass(find_volatile, texts)[0])]
        every = [min(a, b) for a, b in zip(every, _pass(peer.spans, texts)[0])]
        shipped = [min(a, b) for a, b in zip(shipped, _pass(peer.engine, texts)[0])]
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    passes = []
    for _ in range(FILE_PASSES):
        t = time.perf_counter()
        for path in files:
            with open(path, encoding="utf-8") as f:
                peer.spans(f.read())
        passes.append(time.perf_counter() - t)
    peer_per_file = min(passes) / len(files) * 1e3
    mean_ours, mean_every = statistics.fmean(ours), statistics.fmean(every)
    return {
        "ours_ms": round(mean_ours, 3),
        "peer_every_match_ms": round(mean_every, 3),
        "peer_as_shipped_ms": round(statistics.fmean(shipped), 3),
        "speedup": round(mean_every / mean_ours, 2),
        "peer_file_ms": round(peer_per_file, 3),
    }


def _quality(peer: Peer | None, corpus_dir: Path, half: str) -> dict:
    docs = real(corpus_dir, half)
    with tempfile.TemporaryDirectory(prefix="pg-bench-lint-corpus-") as tmp:
        ours = score_lint(Path(tmp), docs)
    out = {"corpus": str(corpus_dir), "half": half, "files": len(docs), "labelled_spans": ours.labelled}
    out["prefixgate"] = {"precision": round(ours.precision, 3), "recall": round(ours.recall, 3)}
    if peer is not None:
        theirs = score_spans(docs, peer.spans)
        out["promptcachelint"] = {"precision": round(theirs.precision, 3), "recall": round(theirs.recall, 3)}
    return out


def measure(
    n: int, size: int, corpus_dir: Path | None = None, half: str = "test", peer_source: str | None = "index"
) -> dict:
    """``peer_source``: "index" (pip's index), a folder of wheels, or None (no peer)."""
    texts = prompts(n, size)
    result = {"prompts": n, "prompt_bytes": size, "detect": _detect(texts)}
    with (
        tempfile.TemporaryDirectory(prefix="pg-bench-lint-") as folder,
        tempfile.TemporaryDirectory(prefix="pg-bench-peer-") as peer_dir,
    ):
        peer = None
        if peer_source is not None:
            got = install(Path(peer_dir), None if peer_source == "index" else peer_source)
            peer = got if isinstance(got, Peer) else None
            result["peer"] = (
                {"name": PACKAGE, "version": got.version} if peer else {"name": PACKAGE, "error": got}
            )
        for i, text in enumerate(texts):
            with open(os.path.join(folder, f"prompt_{i:05d}.md"), "w", encoding="utf-8") as f:
                f.write(text)
        if peer is not None:
            result["peer"].update(_peer_speed(peer, texts, folder))
        codes = resolve(["DEFAULT"], [])
        in_process = float("inf")
        for _ in range(FILE_PASSES):  # the best of a few passes, as the peer's per-file figure is
            t = time.perf_counter()
            findings = run_rules(load([folder]), codes)
            in_process = min(in_process, time.perf_counter() - t)
        if corpus_dir is not None and corpus_dir.is_dir():
            result["quality"] = _quality(peer, corpus_dir, half)
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
        "detect_ms_per_20kb<=0.7": result["detect"]["after_ms"] * 20_480 / size <= 0.7,
        "1000_files<=2s": command * 1000 / n <= 2.0 and proc.returncode == 0,
    }
    if "speedup" in result.get("peer", {}):
        result["targets_met"]["detect>=1.1x_peer"] = result["peer"]["speedup"] >= 1.1
        result["peer"]["lint_file_speedup"] = round(
            result["peer"]["peer_file_ms"] / result["lint_in_process"]["ms_per_file"], 2
        )
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
    peer = r.get("peer")
    if peer and "speedup" in peer:
        rows += [
            (
                f"detect vs {PACKAGE} {peer['version']} (every match), ms per prompt",
                f"{peer['peer_every_match_ms']:.3f}",
                f"{peer['ours_ms']:.3f}",
                f"{peer['speedup']}x",
            ),
            (
                f"{PACKAGE}'s engine as shipped (first match per segment)",
                f"{peer['peer_as_shipped_ms']:.3f}",
                "",
                "",
            ),
            (
                "per file: its read+detect vs our whole lint, ms",
                f"{peer['peer_file_ms']:.3f}",
                f"{r['lint_in_process']['ms_per_file']:.3f}",
                f"{peer['lint_file_speedup']}x",
            ),
        ]
    elif peer:
        rows.append((f"{PACKAGE}: {peer['error']} (ours alone)", "", "", ""))
    q = r.get("quality")
    if q:
        theirs = q.get("promptcachelint", {})
        rows.append(
            (
                f"precision, {q['half']} half ({q['files']} files, {q['labelled_spans']} spans)",
                str(theirs.get("precision", "-")),
                str(q["prefixgate"]["precision"]),
                "",
            )
        )
        rows.append(
            (f"recall, {q['half']} half", str(theirs.get("recall", "-")), str(q["prefixgate"]["recall"]), "")
        )
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
@click.option(
    "--corpus",
    "corpus_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tests/fixtures/detect/real"),
    show_default=True,
    help="A labelled real corpus (one folder per source repository) for precision and recall.",
)
@click.option(
    "--half", type=click.Choice(HALVES), default="test", show_default=True, help="Which half to score."
)
@click.option(
    "--peer",
    "peer_source",
    default="index",
    show_default=True,
    help="Where pip gets promptcachelint: 'index', a folder of wheels, or 'none' (ours alone).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON object (no table).")
def bench_lint_command(
    n: int, size: str, corpus_dir: Path, half: str, peer_source: str, as_json: bool
) -> None:
    """Time detection (before vs after, and beside promptcachelint) and `prefixgate lint` on generated prompts;
    precision and recall on a labelled corpus beside promptcachelint's."""
    result = measure(
        n, int(parse_bytes(size)), corpus_dir, half, None if peer_source == "none" else peer_source
    )
    click.echo(json.dumps(result, indent=2))
    if not as_json:
        click.echo(_table(result))
