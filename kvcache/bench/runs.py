"""The measurements behind ``prefixgate bench engine``; each returns plain numbers, nothing printed.

- ``cache_vs_no_cache``: the seeds' experiment (same prompt, greedy, fixed length; with and without cache).
- ``context_sweep``: prefill and decode tokens/s at several context lengths (median step).
- ``decode_side_by_side``: ours and ``transformers.generate()`` on the same weights and workload, alternated.
- ``memory_bandwidth``: the machine's copy bandwidth, the ceiling decode runs against.
Threads are pinned by the caller; every timed run here is preceded by a warm-up. Not a test: no asserts.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import torch

from kvcache.caches import ContiguousCache
from kvcache.demo import local_corpus
from kvcache.generate import Generation
from kvcache.models.llama import Model
from kvcache.params import GenerationParams
from kvcache.utils.tokenizer import ChatTokenizer


def prompt_of(tokenizer: ChatTokenizer | None, vocab: int, length: int) -> list[int]:
    """``length`` real-text token ids (stdlib docstrings), or seeded random ids without a tokenizer."""
    if tokenizer is not None:
        ids: list[int] = []
        for text in local_corpus():
            ids.extend(i for i in tokenizer.encode(text, add_special_tokens=False) if i < vocab)
            if len(ids) >= length:
                return ids[:length]
    return torch.randint(4, vocab, (length,), generator=torch.Generator().manual_seed(0)).tolist()


def _greedy(model: Model, prompt: list[int], new_tokens: int, cached: bool) -> Generation:
    params = GenerationParams(max_new_tokens=new_tokens)  # no stop tokens: always exactly new_tokens
    cache = ContiguousCache(model.config, len(prompt) + new_tokens, model.dtype) if cached else None
    generation = Generation(model, prompt, params, cache)
    generation.run()
    return generation


def cache_vs_no_cache(model: Model, prompt: list[int], new_tokens: int) -> dict:
    _greedy(model, prompt[: max(1, len(prompt) // 4)], 4, cached=False)  # warm-up
    _greedy(model, prompt, min(new_tokens, 16), cached=True)
    start = time.perf_counter()
    no_cache = _greedy(model, prompt, new_tokens, cached=False)
    no_cache_s = time.perf_counter() - start
    start = time.perf_counter()
    cached = _greedy(model, prompt, new_tokens, cached=True)
    cache_s = time.perf_counter() - start
    t = cached.timings
    return {
        "identical": no_cache.tokens == cached.tokens,
        "no_cache_s": no_cache_s,
        "cache_s": cache_s,
        "speedup": no_cache_s / cache_s,
        "ttft_s": t.ttft_s,
        "prefill_tokens_per_s": t.prefill_tokens_per_s,
        "decode_tokens_per_s": t.decode_tokens_per_s,
        "tokens": cached.tokens,
    }


def decode_steps(
    model: Model, prompt: list[int], steps: int, rounds: int = 1
) -> tuple[float, list[list[float]]]:
    """Prefill ``prompt`` into a fresh cache, then ``rounds`` × ``steps`` greedy one-token steps, each timed.

    Returns (prefill seconds, per-step seconds of each round). One warm-up step runs first (not counted);
    later rounds continue the same sequence, so the context grows by ``steps`` per round."""
    cache = ContiguousCache(model.config, len(prompt) + rounds * steps + 1, model.dtype)
    start = time.perf_counter()
    token = int(model.forward(prompt, cache)[-1].argmax())
    prefill_s = time.perf_counter() - start
    token = int(model.forward([token], cache)[-1].argmax())  # warm-up: first touch of this context's buffers
    timed: list[list[float]] = []
    for _ in range(rounds):
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            token = int(model.forward([token], cache)[-1].argmax())
            times.append(time.perf_counter() - start)
        timed.append(times)
    return prefill_s, timed


def context_sweep(
    model: Model, prompt_source: list[int], contexts: list[int], new_tokens: int, rounds: int = 3
) -> list[dict]:
    """Prefill and decode speed at each context. Decode tokens/s is 1 / the median step time of the best of
    ``rounds`` rounds: on a shared machine a few steps stalled by other processes swing a short mean (the
    old 4k figure, a mean of 31 steps, swung by 40%); the best round's mean-based rate is reported too."""
    rows = []
    kv_per_token = model.config.kv_bytes_per_token(model.embed.element_size())
    for context in contexts:
        if context + rounds * new_tokens + 1 > model.max_context:
            rows.append({"context": context, "skipped": f"beyond the model's context ({model.max_context})"})
            continue
        prompt = (prompt_source * (context // max(1, len(prompt_source)) + 1))[:context]
        decode_steps(model, prompt[: min(context, 64)], 2)  # warm-up
        prefill_s, timed = decode_steps(model, prompt, new_tokens, rounds)
        best = min(timed, key=statistics.median)
        median = statistics.median(best)
        bytes_per_token = model.weight_bytes + kv_per_token * (context + rounds * new_tokens // 2)
        rows.append(
            {
                "context": context,
                "prefill_tokens_per_s": context / prefill_s,
                "ttft_s": prefill_s,
                "decode_steps": rounds * new_tokens,
                "decode_tokens_per_s": 1 / median,
                "decode_tokens_per_s_mean": len(best) / sum(best),
                "decode_round_tokens_per_s": [1 / statistics.median(t) for t in timed],
                "bytes_per_decode_token": bytes_per_token,
                "achieved_gb_per_s": bytes_per_token / median / 1e9,
            }
        )
    return rows


class _StepClock:
    """A transformers logits processor that only records when each new token's logits arrive."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def __call__(self, input_ids, scores):
        self.stamps.append(time.perf_counter())
        return scores


def transformers_model(folder: Path, dtype: torch.dtype):
    """The same checkpoint in transformers, or an error string when transformers is missing."""
    try:
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging
    except ImportError:
        return "transformers is not installed (pip install transformers) — comparison skipped"
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype).eval()
    model.generation_config.eos_token_id = None  # exactly new_tokens every run, as ours (no stop tokens)
    return model


def transformers_decode(model, prompt: list[int], new_tokens: int) -> dict:
    """One greedy ``generate()`` run: decode tokens/s from the arrival times of tokens 1 … n (n-1 steps,
    each a forward pass plus generate()'s own per-token work, as ours counts model plus sampler)."""
    from transformers import LogitsProcessorList

    clock = _StepClock()
    ids = torch.tensor([prompt])
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=0,
            logits_processor=LogitsProcessorList([clock]),
        )
    decode_s = max(clock.stamps[-1] - clock.stamps[0], 1e-9)
    return {
        "decode_tokens_per_s": (len(clock.stamps) - 1) / decode_s,
        "ttft_s": clock.stamps[0] - start,
        "tokens": out[0, len(prompt) :].tolist(),
    }


def decode_side_by_side(model: Model, hf_model, prompt: list[int], new_tokens: int, repeats: int) -> dict:
    """Ours and transformers (``hf_model`` may be None) alternately, ``repeats`` runs each after a warm-up;
    the best run of each counts (the run least disturbed by other processes)."""
    _greedy(model, prompt, min(new_tokens, 8), cached=True)
    if hf_model is not None:
        transformers_decode(hf_model, prompt, min(new_tokens, 8))
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(_greedy(model, prompt, new_tokens, cached=True))
        if hf_model is not None:
            theirs.append(transformers_decode(hf_model, prompt, new_tokens))
    result = {
        "runs": [g.timings.decode_tokens_per_s for g in ours],
        "decode_tokens_per_s": max(g.timings.decode_tokens_per_s for g in ours),
        "tokens": ours[0].tokens,
    }
    if theirs:
        best = max(theirs, key=lambda r: r["decode_tokens_per_s"])
        result["hf_runs"] = [r["decode_tokens_per_s"] for r in theirs]
        result["hf"] = best
    return result


def memory_bandwidth(megabytes: int = 512, repeats: int = 5) -> float:
    """Bytes/s of a large tensor copy (read + write counted), best of ``repeats``."""
    src = torch.ones(megabytes * 2**20 // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best


def l3_cache_bytes() -> int | None:
    for index in range(4, -1, -1):
        base = Path(f"/sys/devices/system/cpu/cpu0/cache/index{index}")
        try:
            if (base / "level").read_text().strip() == "3":
                size = (base / "size").read_text().strip().upper()
                scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1], 1)
                return int(size.rstrip("KMG")) * scale
        except (OSError, ValueError):
            continue
    return None
