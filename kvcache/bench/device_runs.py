"""The measurements behind the device suite (``bench.device_suite``); each returns plain numbers.

- ``copy_bandwidth``: the device's copy bandwidth (read + write), the seeds' ceiling's numerator.
- ``transformers_figures`` (``hf_model`` / ``hf_decode`` / ``logits_vs_hf``): ``transformers``' model on
  the same weights and device, its ``generate()`` speed, and how far our logits are from its.
- ``decode`` / ``aggregate``: greedy sequences through the engine (its loop thread, graphs, sampler), one
  or many at once, timed from the tokens' arrival; ``ttft``: a prompt's time to its first token.
- ``pool_holds``: how many conversations of N tokens the engine's allocator fits in its pool at once.
Every timed run is preceded by a warm-up of the same sizes (graphs are captured then). Not a test.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time

import torch

from kvcache.engine.engine import Engine
from kvcache.engine.sequence import Sequence
from kvcache.models.llama import Model
from kvcache.params import GenerationParams
from kvcache.utils.device import synchronize

log = logging.getLogger(__name__)


def random_prompt(vocab: int, length: int, seed: int) -> list[int]:
    return torch.randint(2, vocab, (length,), generator=torch.Generator().manual_seed(seed)).tolist()


def copy_bandwidth(device: torch.device, megabytes: int, repeats: int = 5) -> float:
    """Bytes/s of a large copy on ``device`` (read + write counted), best of ``repeats``."""
    src = torch.ones(megabytes * 2**20 // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    synchronize(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        dst.copy_(src)
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    del src, dst
    return 2 * megabytes * 2**20 / best


def hf_model(shape: dict, weights: dict[str, torch.Tensor], device: torch.device, dtype: torch.dtype):
    """transformers' model for ``shape`` holding ``weights`` themselves (no copy), or a str saying why not."""
    try:
        import transformers
    except ImportError:
        return "transformers is not installed: the comparison is skipped"
    fields = {k: v for k, v in shape.items() if k not in ("architectures", "model_type", "prefixgate_shape")}
    config = transformers.AutoConfig.for_model(shape["model_type"], **fields)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    finally:
        torch.set_default_dtype(default)
    missing, unexpected = model.load_state_dict(weights, strict=False, assign=True)
    tied = [m for m in missing if m == "lm_head.weight" and shape.get("tie_word_embeddings")]
    if set(missing) - set(tied) or unexpected:
        return f"transformers' model does not take these weights (missing {missing}, unexpected {unexpected})"
    if tied:
        model.tie_weights()
    # no end token: greedy to a fixed length, as ours (an eos would stop it, and min_new_tokens would
    # mask it: a different argmax wherever ours picks that token)
    model.generation_config.eos_token_id = None
    return model.eval()


def transformers_figures(cfg, shape, weights, model, prompt, device, dtype) -> dict:
    """Logits against transformers' and its ``generate()`` speed and tokens; ``skipped`` (why) when
    turned off, not installed or failing (logged: the suite's other figures still come)."""
    if not cfg.transformers:
        return {"skipped": "--no-transformers"}
    try:
        return _transformers(cfg, shape, weights, model, prompt, device, dtype)
    except Exception as exc:  # noqa: BLE001 (transformers' API varies by version; said, not fatal)
        log.exception("the comparison with transformers failed")
        return {"skipped": f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}


def _transformers(cfg, shape, weights, model, prompt, device, dtype) -> dict:
    hf = hf_model(shape, weights, device, dtype)
    if isinstance(hf, str):
        return {"skipped": hf}
    logits = logits_vs_hf(model, hf, prompt[: cfg.logits_tokens])
    if not all(v == v and abs(v) != float("inf") for v in logits.values()):
        raise RuntimeError(f"non-finite logits comparing with transformers: {logits}")
    rtol = 1e-4 if dtype == torch.float32 else 2e-2
    logits["tolerance"] = rtol * max(1.0, logits["max_abs_logit"])
    logits["within_tolerance"] = logits["max_abs_diff"] <= logits["tolerance"]
    hf_decode(hf, prompt, 8, device)  # warm-up
    decode = hf_decode(hf, prompt, cfg.new_tokens, device)
    return {"logits": logits, "decode_tokens_per_s": decode["tokens_per_s"], "tokens": decode["tokens"]}


@torch.inference_mode()
def logits_vs_hf(model: Model, hf, prompt: list[int]) -> dict:
    """Every position's logits of ``prompt``, ours (no cache) against transformers'."""
    ours = model.forward(prompt, None, all_logits=True)
    theirs = hf(torch.tensor([prompt], device=model.device)).logits[0].float()
    diff = (ours - theirs).abs()
    return {
        "max_abs_diff": float(diff.max()),
        "mean_abs_diff": float(diff.mean()),
        "max_abs_logit": float(theirs.abs().max()),
        "argmax_agreement": float((ours.argmax(-1) == theirs.argmax(-1)).float().mean()),
    }


class _Clock:
    def __init__(self):
        self.stamps: list[float] = []

    def __call__(self, input_ids, scores):
        self.stamps.append(time.perf_counter())
        return scores


@torch.inference_mode()
def hf_decode(hf, prompt: list[int], new_tokens: int, device: torch.device) -> dict:
    """One greedy ``generate()``: tokens/s from the arrival of tokens 1 … n, and its tokens."""
    from transformers import LogitsProcessorList

    clock = _Clock()
    ids = torch.tensor([prompt], device=device)
    out = hf.generate(
        ids,
        attention_mask=torch.ones_like(ids),
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=0,
        logits_processor=LogitsProcessorList([clock]),
    )
    synchronize(device)
    span = max(clock.stamps[-1] - clock.stamps[0], 1e-9)
    return {"tokens_per_s": (len(clock.stamps) - 1) / span, "tokens": out[0, len(prompt) :].tolist()}


def run_together(
    engine: Engine, prompts: list[list[int]], new_tokens: int
) -> tuple[list[Sequence], list[float]]:
    """``prompts`` submitted at once, greedy, no stop tokens; returns their sequences when all ended and
    the arrival time of every token."""
    stamps: list[float] = []
    done = threading.Semaphore(0)
    params = GenerationParams(max_new_tokens=new_tokens)

    def listener(token):
        if token is None:
            done.release()

    observer = lambda seq, now, gap: stamps.append(now)  # noqa: E731
    engine.loop.observers.append(observer)
    try:
        seqs = [engine.submit(p, params, listener) for p in prompts]
        for _ in seqs:
            done.acquire()
    finally:
        engine.loop.observers.remove(observer)
    for seq in seqs:
        if seq.error is not None:
            raise RuntimeError(f"a benchmark sequence failed: {seq.error!r}") from seq.error
    return seqs, stamps


def aggregate(engine: Engine, prompts: list[list[int]], new_tokens: int) -> dict:
    """Tokens/s of all ``prompts`` decoding together: tokens arriving after the last one's first token,
    over the time from then to the end (a warm-up of the same sizes first)."""
    run_together(engine, prompts, new_tokens)
    seqs, stamps = run_together(engine, prompts, new_tokens)
    start = max(s.first_token_at for s in seqs)
    end = max(s.last_token_at for s in seqs)
    counted = sum(1 for t in stamps if t > start)
    return {
        "batch": len(prompts),
        "tokens_per_s": counted / max(end - start, 1e-9),
        "per_stream_tokens_per_s": statistics.median(s.timings.decode_tokens_per_s for s in seqs),
        "tokens": [s.tokens for s in seqs],
    }


def ttft(engine: Engine, prompt: list[int]) -> tuple[float, int]:
    """Seconds from submitting ``prompt`` to its first token, and the prompt tokens the prefix cache served."""
    seqs, _ = run_together(engine, [prompt], 1)
    return seqs[0].first_token_at - seqs[0].arrival, seqs[0].cached_tokens or 0


def pool_holds(engine: Engine, tokens: int, vocab: int) -> int:
    """Conversations of ``tokens`` tokens the engine's allocator gives blocks to at once (then all freed)."""
    allocator, held = engine.allocator, []
    with engine.lock:
        while True:
            seq = Sequence(random_prompt(vocab, tokens, 10_000 + len(held)), GenerationParams(), 1)
            if allocator.blocks_needed(seq, tokens) > allocator.num_free:
                break
            allocator.allocate(seq, tokens)
            held.append(seq)
        for seq in held:
            allocator.free(seq)
    return len(held)
