"""The engine on its device, in one run: the seeds' claims measured (``prefixgate bench engine --device``,
``python -m kvcache.bench.gpu``).

A random-weight model of a real shape (``models.shapes``) is built on the device; then: copy bandwidth and
the ceiling ``bandwidth / weight bytes``; logits and ``generate()`` speed of ``transformers`` on the same
weights (when installed); the engine's decode tokens/s at batch 1 and aggregate at each ``--batches``; the
batched greedy output against each prompt alone; time to first token cold and warm behind a shared
prefix; conversations the pool holds against the formula. ``SuiteConfig.for_device`` gives the defaults:
the H200 reference workload on CUDA, a small one on the CPU. It imports neither click nor rich nor the
HTTP server: a machine with torch (and transformers) runs it. It reports; ``aims`` compares.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import torch

import analyzer.kv as kv
from kvcache.bench import device_runs as runs
from kvcache.bench.device_report import aims
from kvcache.config import ModelConfig
from kvcache.engine.engine import Engine, EngineConfig
from kvcache.models.build import build_model
from kvcache.models.shapes import random_weights, shape_dict
from kvcache.utils.device import resolve_device
from kvcache.utils.dtypes import dtype_name, resolve_dtype


@dataclass(frozen=True)
class SuiteConfig:
    device: str = "auto"
    dtype: str = "auto"
    shape: str = "llama-3-8b"
    seed: int = 0
    threads: int = 1
    block_size: int = 16
    kv_memory: str | None = None  # None: the engine's default for the device
    max_batched_tokens: int = 2048
    batches: tuple[int, ...] = (1, 8, 32, 64)
    prompt_tokens: int = 128
    new_tokens: int = 256
    identity_batch: int = 8
    identity_tokens: int = 64
    prefix_tokens: int = 8192
    turn_tokens: int = 64
    ttft_rounds: int = 2
    conversation_tokens: int = 4096
    transformers: bool = True
    bandwidth_mb: int = 2048
    cuda_graphs: bool = True
    logits_tokens: int = 128

    @classmethod
    def for_device(cls, device: str = "auto", **overrides) -> SuiteConfig:
        """The reference workload on CUDA; a small one on the CPU (tiny shape, short prompts, few rows)."""
        base = cls(device=device)
        if resolve_device(device).type == "cpu":
            base = replace(
                base,
                shape="tiny",
                kv_memory="64MiB",
                max_batched_tokens=256,
                batches=(1, 2, 4, 8),
                prompt_tokens=32,
                new_tokens=32,
                identity_batch=4,
                identity_tokens=16,
                prefix_tokens=512,
                turn_tokens=16,
                ttft_rounds=1,
                conversation_tokens=1024,
                bandwidth_mb=256,
                logits_tokens=32,
            )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclass
class _Clock:
    seconds: dict[str, float] = field(default_factory=dict)
    last: float = field(default_factory=time.perf_counter)
    progress: Callable[[str], None] | None = None  # told each part's end (a run cut short shows where)

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self.last, 2)
        self.last = now
        if self.progress is not None:
            self.progress(f"{name}: {self.seconds[name]} s")


def run_suite(cfg: SuiteConfig, progress: Callable[[str], None] | None = None) -> dict:
    clock = _Clock(progress=progress)
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    dtype = resolve_dtype(cfg.dtype, device)
    shape = shape_dict(cfg.shape)
    config = ModelConfig.from_dict(shape)
    context = max(
        cfg.prefix_tokens + cfg.turn_tokens + 2,
        cfg.conversation_tokens,
        cfg.prompt_tokens + cfg.new_tokens + 1,
    )
    if context > config.max_position_embeddings:
        raise ValueError(
            f"the workload needs {context} tokens of context; {cfg.shape} has {config.max_position_embeddings}"
        )
    weights = random_weights(config, device, dtype, cfg.seed)
    model = build_model(
        config,
        lambda name, _shape, get=weights.__getitem__: get(name),
        weights.__contains__,
        dtype,
        device,
        context,
    )
    clock.lap("build")
    vocab = config.vocab_size
    prompt = runs.random_prompt(vocab, cfg.prompt_tokens, cfg.seed)
    bandwidth = runs.copy_bandwidth(device, cfg.bandwidth_mb)
    ceiling = kv.decode_ceiling(bandwidth, model.weight_bytes)
    result: dict = {
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
        "dtype": dtype_name(dtype),
        "shape": cfg.shape,
        "random_weights": True,
        "config": asdict(cfg),
        "weight_bytes": model.weight_bytes,
        "copy_bandwidth_gb_per_s": bandwidth / 1e9,
        "ceiling_tokens_per_s": ceiling,
        "torch": torch.__version__,
    }
    result["transformers"] = runs.transformers_figures(cfg, shape, weights, model, prompt, device, dtype)
    del weights
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    clock.lap("transformers")
    before = torch.cuda.memory_allocated(device) if device.type == "cuda" else None
    engine = Engine(
        EngineConfig(
            device=str(device),
            threads=cfg.threads,
            max_context=context,
            block_size=cfg.block_size,
            kv_memory=cfg.kv_memory,
            context=cfg.conversation_tokens,
            max_seqs=max(*cfg.batches, cfg.identity_batch),
            max_batched_tokens=max(cfg.max_batched_tokens, *cfg.batches, cfg.identity_batch),
            cuda_graphs=cfg.cuda_graphs,
        ),
        model=model,
        model_id=cfg.shape,
    )
    try:
        result["engine"] = engine.describe()
        result["pool"] = _pool(engine, cfg, vocab, before)
        clock.lap("pool")
        result["decode"] = _decode(engine, cfg, vocab, prompt, ceiling, result["transformers"])
        clock.lap("decode")
        result["identity"] = _identity(engine, model, cfg, vocab)
        clock.lap("identity")
        result["ttft"] = _ttft(engine, cfg, vocab)
        clock.lap("ttft")
        graphs = engine.runner.graphs
        result["graph_steps"] = engine.runner.graph_steps
        result["graphs_captured"] = graphs.captured if graphs else 0
        result["graph_capture_error"] = graphs.capture_error if graphs else None
    finally:
        engine.close()
    if device.type == "cuda" and cfg.cuda_graphs and not result["graph_steps"]:
        raise RuntimeError("no decode step ran as a CUDA graph: these would not be the graph path's figures")
    result["seconds"] = clock.seconds
    result["aims"] = aims(result)
    return result


def _pool(engine: Engine, cfg: SuiteConfig, vocab: int, before: int | None) -> dict:
    plan, c = engine.plan, engine.model.config
    per_conversation = kv.kv_cache_bytes(
        c.num_layers, c.num_kv_heads, c.head_dim, plan.tokens_kept, 1, engine.pool.kv.element_size()
    )
    held = runs.pool_holds(engine, cfg.conversation_tokens, vocab)
    formula = kv.conversations_that_fit(engine.pool.nbytes, 0, per_conversation)
    return {
        "banner": engine.banner(),
        "bytes_per_token": plan.bytes_per_token,
        "blocks": plan.blocks,
        "pool_bytes": engine.pool.nbytes,
        "device_bytes_allocated": None
        if before is None
        else torch.cuda.memory_allocated(engine.device) - before,
        "conversation_tokens": cfg.conversation_tokens,
        "formula_conversations": formula,
        "held_conversations": held,
        "held_over_formula": held / formula if formula else None,
    }


def _decode(engine: Engine, cfg: SuiteConfig, vocab: int, prompt, ceiling: float, hf: dict) -> dict:
    rows = []
    for batch in cfg.batches:
        prompts = [prompt] + [
            runs.random_prompt(vocab, cfg.prompt_tokens, cfg.seed + 100 + i) for i in range(batch - 1)
        ]
        run = runs.aggregate(engine, prompts, cfg.new_tokens)
        rows.append(
            {
                "batch": batch,
                "tokens_per_s": run["tokens_per_s"],
                "per_stream_tokens_per_s": run["per_stream_tokens_per_s"],
            }
        )
        if batch == 1:
            ours_tokens = run["tokens"][0]
    one = next((r["tokens_per_s"] for r in rows if r["batch"] == 1), None)
    for row in rows:
        row["over_batch_1"] = row["tokens_per_s"] / one if one else None
    out = {"batches": rows, "batch_1_tokens_per_s": one, "share_of_ceiling": one / ceiling if one else None}
    if "decode_tokens_per_s" in hf and one:
        out["vs_transformers"] = one / hf["decode_tokens_per_s"]
        out["transformers_same_tokens"] = _agree(ours_tokens, hf["tokens"]) if 1 in cfg.batches else None
    return out


def _agree(a: list[int], b: list[int]) -> dict:
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    return {"identical": a == b, "first_difference": first, "compared": min(len(a), len(b))}


@torch.inference_mode()
def _identity(engine: Engine, model, cfg: SuiteConfig, vocab: int) -> dict:
    """The batched greedy tokens of ``identity_batch`` prompts against each prompt run alone; where they
    differ, the logit gap between the two tokens there (a near tie, or a real difference)."""
    prompts = [
        runs.random_prompt(vocab, cfg.prompt_tokens + 3 * i, cfg.seed + 300 + i)
        for i in range(cfg.identity_batch)
    ]
    together, _ = runs.run_together(engine, prompts, cfg.identity_tokens)
    alone = [runs.run_together(engine, [p], cfg.identity_tokens)[0][0].tokens for p in prompts]
    rows, gaps = [], []
    for p, seq, solo in zip(prompts, together, alone, strict=True):
        row = _agree(seq.tokens, solo)
        if row["first_difference"] is not None:
            k = row["first_difference"]
            logits = model.forward(p + solo[:k], None)[-1]
            gaps.append(abs(float(logits[solo[k]] - logits[seq.tokens[k]])))
        rows.append(row)
    return {
        "batch": cfg.identity_batch,
        "tokens": cfg.identity_tokens,
        "identical": all(r["identical"] for r in rows),
        "identical_rows": sum(r["identical"] for r in rows),
        "rows": rows,
        "max_gap_at_difference": max(gaps) if gaps else None,
    }


def _ttft(engine: Engine, cfg: SuiteConfig, vocab: int) -> dict:
    runs.ttft(engine, runs.random_prompt(vocab, 64, 7))  # warm-up
    cold, warm, cached = [], [], []
    for r in range(cfg.ttft_rounds):
        prefix = runs.random_prompt(vocab, cfg.prefix_tokens, cfg.seed + 500 + r)
        turns = [runs.random_prompt(vocab, cfg.turn_tokens, cfg.seed + 600 + 2 * r + i) for i in range(2)]
        cold.append(runs.ttft(engine, prefix + turns[0])[0])
        seconds, hit = runs.ttft(engine, prefix + turns[1])
        warm.append(seconds)
        cached.append(hit)
    c, w = statistics.median(cold), statistics.median(warm)
    return {
        "prefix_tokens": cfg.prefix_tokens,
        "cold_s": c,
        "warm_s": w,
        "warm_over_cold": w / c,
        "warm_cached_tokens": cached,
    }
