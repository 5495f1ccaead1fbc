"""``python -m kvcache.bench.gpu [--out PATH]``: the device suite with argparse, for a machine that has
torch (and transformers) but none of the HTTP server's dependencies, nor click or rich.

It checks what it needs first and says what is missing (torch; CUDA when ``--device cuda``; transformers,
optional), runs ``bench.device_suite`` (each part's seconds on stderr unless ``--json``), prints a plain
table, and writes the JSON to ``--out``. A failure ends with its traceback, one line on stderr and exit
code 1, before any JSON is written: never a half-filled result (a failing transformers part is skipped,
and said). It is what ``scripts/gpu-bench.sh`` runs; ``prefixgate bench engine --device`` runs it too.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
import traceback
from pathlib import Path

MIN_TORCH = (2, 5)


def _batches(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("a comma-separated list of batch sizes, e.g. 1,8,32,64") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("batch sizes must be positive")
    return values


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kvcache.bench.gpu", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="Write the JSON here.")
    p.add_argument("--json", action="store_true", help="Print the JSON instead of the table.")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto).")
    p.add_argument("--dtype", default="auto", help="auto (bf16 on CUDA, fp32 on the CPU), fp32, bf16, fp16.")
    p.add_argument("--shape", help="A model shape (default: llama-3-8b on CUDA, tiny on the CPU).")
    p.add_argument("--kv-memory", help="The KV pool: a size or a fraction of free memory.")
    p.add_argument("--batches", type=_batches, help="Batch sizes for aggregate tokens/s (CUDA: 1,8,32,64).")
    p.add_argument("--no-transformers", action="store_true", help="Skip the transformers comparison.")
    p.add_argument("--no-cuda-graphs", action="store_true", help="Decode eagerly on CUDA.")
    for flag in (
        "prompt-tokens",
        "new-tokens",
        "prefix-tokens",
        "turn-tokens",
        "conversation-tokens",
        "threads",
    ):
        p.add_argument(f"--{flag}", type=int, help="Override the device's default.")
    return p


def missing_requirements(device: str) -> list[str]:
    """What this machine lacks for the suite, as lines to print (empty: nothing)."""
    if importlib.util.find_spec("torch") is None:
        return ["torch is not installed (the suite needs torch; transformers is optional)"]
    import torch

    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    if (major, minor) < MIN_TORCH:  # SDPA's enable_gqa (2.5), F.rms_norm (2.4)
        return [f"torch {torch.__version__} is too old: the engine needs torch >= 2.5"]
    if device.startswith("cuda") and not torch.cuda.is_available():
        return [f"--device {device}: torch {torch.__version__} sees no CUDA device"]
    return []


def suite_argv(**options: object) -> list[str]:
    """``main``'s argv from keyword options (``prefixgate bench engine``'s): ``--flag value`` for each value
    that is set, a bare ``--flag`` for each ``True``; None and ``False`` are left out."""
    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not None and value is not False:
            argv += [flag, str(value)]
    return argv


def _progress(line: str) -> None:
    print(f"[suite] {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")  # a failed part's traceback
    lacking = missing_requirements(args.device)
    if args.out and not os.access(args.out.resolve().parent, os.W_OK):  # before minutes of work, not after
        lacking.append(f"--out {args.out}: its folder does not exist or is not writable")
    if lacking:
        print("\n".join(lacking), file=sys.stderr)
        return 1
    from kvcache.bench.device_report import render
    from kvcache.bench.device_suite import SuiteConfig, run_suite

    if importlib.util.find_spec("transformers") is None and not args.no_transformers:
        print("transformers is not installed: the comparison with generate() is skipped", file=sys.stderr)
    try:
        cfg = SuiteConfig.for_device(
            args.device,
            dtype=args.dtype,
            shape=args.shape,
            kv_memory=args.kv_memory,
            batches=args.batches,
            transformers=False if args.no_transformers else None,
            cuda_graphs=False if args.no_cuda_graphs else None,
            prompt_tokens=args.prompt_tokens,
            new_tokens=args.new_tokens,
            prefix_tokens=args.prefix_tokens,
            turn_tokens=args.turn_tokens,
            conversation_tokens=args.conversation_tokens,
            threads=args.threads,
        )
        result = run_suite(cfg, progress=None if args.json else _progress)
    except Exception as exc:  # noqa: BLE001 (the traceback, then one clear line and a non-zero exit)
        traceback.print_exc()
        print(f"the device suite failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
