"""The measurements behind ``prefixgate bench engine``; each returns plain numbers, nothing printed.

- ``cache_vs_no_cache``: the seeds' experiment (same prompt, greedy, fixed length; with and without cache).
- ``context_sweep``: prefill and decode tokens/s at several context lengths.
- ``transformers_decode``: the same weights and workload in ``transformers.generate()``.
- ``memory_bandwidth``: the machine's copy bandwidth, the ceiling decode runs against.
Threads are pinned by the caller; every timed run here is preceded by a warm-up. Not a test: no asserts.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch

from kvcache.caches import ContiguousCache
from kvcache.demo import local_corpus
from kvcache.generate import Generation, GenerationParams
from kvcache.model import Model
from kvcache.tokenizer import ChatTokenizer


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


def context_sweep(model: Model, prompt_source: list[int], contexts: list[int], new_tokens: int) -> list[dict]:
    rows = []
    for context in contexts:
        if context + new_tokens > model.max_context:
            rows.append({"context": context, "skipped": f"beyond the model's context ({model.max_context})"})
            continue
        prompt = (prompt_source * (context // max(1, len(prompt_source)) + 1))[:context]
        _greedy(model, prompt[: min(context, 64)], 2, cached=True)  # warm-up
        t = _greedy(model, prompt, new_tokens, cached=True).timings
        kv = model.config.kv_bytes_per_token(model.embed.element_size()) * (context + new_tokens // 2)
        rows.append(
            {
                "context": context,
                "prefill_tokens_per_s": t.prefill_tokens_per_s,
                "ttft_s": t.ttft_s,
                "decode_tokens_per_s": t.decode_tokens_per_s,
                "bytes_per_decode_token": model.weight_bytes + kv,
            }
        )
    return rows


def transformers_decode(folder: Path, prompt: list[int], new_tokens: int, dtype: torch.dtype) -> dict:
    """Decode tokens/s of ``generate()`` on the same weights: (n-1) / (t(n tokens) - t(1 token))."""
    try:
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging
    except ImportError:
        return {"error": "transformers is not installed (pip install transformers) — comparison skipped"}
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype).eval()
    ids = torch.tensor([prompt])

    def run(n: int) -> tuple[float, list[int]]:
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=n,
                min_new_tokens=n,
                do_sample=False,
                pad_token_id=0,
            )
        return time.perf_counter() - start, out[0, len(prompt) :].tolist()

    run(4)  # warm-up
    first_s, _ = run(1)
    full_s, tokens = run(new_tokens)
    decode_s = max(full_s - first_s, 1e-9)
    return {"decode_tokens_per_s": (new_tokens - 1) / decode_s, "ttft_s": first_s, "total_s": full_s, "tokens": tokens}


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
