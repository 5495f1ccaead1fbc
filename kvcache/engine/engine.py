"""The server-side engine: one loaded model, its tokenizer, a paged block pool shared by all requests (on
the model's device, sized by ``memory``), and one loop thread that runs every request together.

``submit`` puts a request on the scheduler's waiting queue and returns its ``Sequence``; the loop thread
(``loop.EngineLoop``) then repeats: schedule a step (decodes, prompt chunks, admissions, preemptions), run
it as one forward pass, hand each sampled token to its request's listener, and free a finished sequence's
blocks before telling its listener. ``abort`` (a client that left) takes a sequence out at the next step
and frees its blocks. A prompt that starts like an earlier (or concurrent) one reuses that prefix's blocks
(``cached_tokens``). ``run`` is a blocking iterator over one request's tokens. It does not parse HTTP (see
``server``).
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from kvcache.caches import BlockPool, Int8BlockPool
from kvcache.engine.allocator import BlockAllocator
from kvcache.engine.graphs import DecodeGraphs
from kvcache.engine.loop import EngineLoop
from kvcache.engine.memory import default_blocks as default_blocks  # re-exported
from kvcache.engine.memory import parse_kv_memory, plan_pool
from kvcache.engine.model_runner import ModelRunner
from kvcache.engine.scheduler import Scheduler, SchedulerConfig
from kvcache.engine.sequence import Sequence
from kvcache.errors import ContextLengthError, EngineError
from kvcache.generate import check_prompt
from kvcache.models.llama import Model
from kvcache.params import GenerationParams
from kvcache.utils.device import free_bytes, resolve_device
from kvcache.utils.dtypes import dtype_name
from kvcache.utils.loader import load_model

if TYPE_CHECKING:  # annotations only: the tokenizer (jinja2, tokenizers) is imported when a folder loads
    from kvcache.utils.tokenizer import ChatTokenizer

KV_CACHE_KINDS = ("fp", "int8")


@dataclass(frozen=True)
class EngineConfig:
    model_path: str | None = None  # None: the demo model
    dtype: str = "auto"  # bf16 on CUDA, fp32 on the CPU
    device: str = "auto"  # CUDA when present
    threads: int | None = None
    max_context: int | None = None
    block_size: int = 16
    kv_blocks: int | None = None  # None: sized by kv_memory, or the device's default (engine.memory)
    kv_memory: str | None = None  # a size or a fraction of free memory (engine.memory)
    context: int | None = None  # the conversation length the start banner counts (default: the context)
    kv_cache: str = "fp"  # the pool's storage: the model's dtype, or int8 with per-token scales
    max_seqs: int = 16  # sequences decoding together
    max_batched_tokens: int = 512  # tokens per step: decodes plus prompt chunks
    chunked_prefill: bool = True
    decode_slowdown: float = 2.0  # while streams decode, a step may take this × a decode-only step (0: off)
    prefix_sharing: bool = True
    cuda_graphs: bool = True  # on CUDA, decode-only steps replay captured graphs (engine.graphs)

    def __post_init__(self) -> None:
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be at least 1")
        if self.max_context is not None and self.max_context < 2:
            raise ValueError("max_context must be at least 2 tokens")
        if self.block_size < 1 or (self.kv_blocks is not None and self.kv_blocks < 1):
            raise ValueError("block_size and kv_blocks must be positive")
        if self.kv_cache not in KV_CACHE_KINDS:
            raise ValueError(f"kv_cache must be one of {', '.join(KV_CACHE_KINDS)}, got {self.kv_cache!r}")
        if self.kv_memory is not None:
            parse_kv_memory(self.kv_memory)  # its own checks
        if self.context is not None and self.context < 1:
            raise ValueError("context must be at least 1 token")
        _ = self.scheduler  # SchedulerConfig checks its own fields

    @property
    def scheduler(self) -> SchedulerConfig:
        return SchedulerConfig(
            self.max_seqs, self.max_batched_tokens, self.chunked_prefill, self.decode_slowdown
        )


def default_threads() -> int:
    return max(
        1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
    )


class Engine:
    """``model`` (and ``tokenizer``, ``model_id``): an already built model, e.g. random weights of a real
    shape (``models.shapes``) for benchmarks; None loads ``config.model_path`` or the demo model."""

    def __init__(
        self,
        config: EngineConfig,
        model: Model | None = None,
        tokenizer: ChatTokenizer | None = None,
        model_id: str | None = None,
    ):
        self.config = config
        self.is_demo = config.model_path is None and model is None
        self.notice = None
        torch.set_num_threads(config.threads or default_threads())
        self.device = resolve_device(config.device) if model is None else model.device
        if model is None:
            from kvcache.demo import DEMO_NOTICE, ensure_demo_model
            from kvcache.utils.tokenizer import ChatTokenizer

            folder = ensure_demo_model() if self.is_demo else Path(config.model_path).expanduser()
            self.notice = DEMO_NOTICE if self.is_demo else None
            model = load_model(folder, config.dtype, config.max_context, self.device)
            tokenizer, model_id = ChatTokenizer.from_folder(folder), folder.name
        self.model, self.tokenizer, self.model_id = model, tokenizer, model_id or "model"
        c = self.model.config
        int8 = config.kv_cache == "int8"
        self.plan = plan_pool(
            c,
            1 if int8 else self.model.embed.element_size(),
            config.block_size,
            self.max_context,
            free_bytes(self.device),
            self.device.type == "cuda",
            config.kv_memory,
            config.kv_blocks,
            config.context,
            side_bytes_per_token=2 * c.num_layers * c.num_kv_heads * 2
            if int8
            else 0,  # fp16 scales of K and V
        )
        pool_class = Int8BlockPool if int8 else BlockPool
        try:
            self.pool = pool_class(c, self.plan.blocks, config.block_size, self.model.dtype, self.device)
        except (RuntimeError, MemoryError) as exc:  # torch: "can't allocate memory" / CUDA out of memory
            raise EngineError(
                f"cannot allocate a KV pool of {self.plan.blocks} blocks: {str(exc).splitlines()[0]}"
            ) from None
        eos = self.tokenizer.token_id(self.tokenizer.eos_token) if self.tokenizer is not None else None
        self.stop_ids = frozenset(c.eos_token_ids) | frozenset(i for i in (eos,) if i is not None)
        window = c.sliding_window  # every layer's, or None
        self.allocator = BlockAllocator(self.pool.manager, config.prefix_sharing, window)
        self.scheduler = Scheduler(config.scheduler, self.allocator)
        graphs = None
        if self.device.type == "cuda" and config.cuda_graphs:
            graphs = DecodeGraphs(self.model, self.pool, config.max_seqs, capture=True)
        self.runner = ModelRunner(self.model, self.pool, window, graphs)
        self.loop = EngineLoop(self.scheduler, self.runner)
        self.lock = self.loop.lock  # held only while the queues change, never during a forward pass

    @property
    def max_context(self) -> int:
        return self.model.max_context

    def describe(self) -> str:
        c, cfg = self.model.config, self.config
        window = f", sliding window {c.sliding_window}" if c.sliding_window else ""
        where = (
            self.device.type
            if self.device.type == "cpu"
            else f"{self.device} ({torch.cuda.get_device_name(self.device)})"
        )
        graphs = ", CUDA graphs for decode steps" if self.runner.graphs and self.runner.graphs.capture else ""
        return (
            f"{self.model_id}: {c.model_type}, {c.num_layers} layers, {c.num_heads} heads / {c.num_kv_heads} KV heads, "
            f"{dtype_name(self.model.dtype)} on {where}, context {self.max_context}{window}, KV pool "
            f"{(self.pool.nbytes + self.pool.extra_nbytes) / 2**20:.1f} MiB {cfg.kv_cache} "
            f"({self.pool.manager.num_free} blocks of {self.pool.block_size} tokens), up to {cfg.max_seqs} sequences "
            f"per step, {cfg.max_batched_tokens} tokens per step"
            + (" (chunked prefill)" if cfg.chunked_prefill else "")
            + ("" if cfg.prefix_sharing else ", prefix sharing off")
            + graphs
        )

    def banner(self) -> str:
        """The seeds' arithmetic for the pool: bytes per token, blocks, conversations that fit."""
        return self.plan.banner()

    def check(self, prompt_ids: list[int], max_new_tokens: int | None) -> int:
        """Validate lengths; returns the number of new tokens to allow."""
        check_prompt(self.model, prompt_ids)
        room = self.max_context - len(prompt_ids)
        if max_new_tokens is None:
            return room
        if max_new_tokens > room:
            raise ContextLengthError(
                f"this model's context is {self.max_context} tokens; the prompt has {len(prompt_ids)} tokens and "
                f"max_tokens asks for {max_new_tokens} more"
            )
        return max_new_tokens

    def submit(
        self, prompt_ids: list[int], params: GenerationParams, listener: Callable[[int | None], None]
    ) -> Sequence:
        """Queue a request; ``listener`` gets each token id from the loop thread, then ``None`` at the end."""
        check_prompt(self.model, prompt_ids)
        budget = min(params.max_new_tokens, self.max_context - len(prompt_ids))
        seq = Sequence(prompt_ids, params, budget, listener)
        self.loop.add(seq)
        return seq

    def abort(self, seq: Sequence) -> None:
        """Remove ``seq`` at the next step and free its blocks (a client that left); no-op once finished."""
        self.loop.abort(seq)

    def run(self, prompt_ids: list[int], params: GenerationParams) -> EngineRun:
        return EngineRun(self, prompt_ids, params)

    def close(self) -> None:
        self.loop.close()


class EngineRun:
    """Iterate for one request's token ids (blocking); ``generation`` (its ``Sequence``) holds usage and
    timings. Closing the iterator early aborts the request."""

    def __init__(self, engine: Engine, prompt_ids: list[int], params: GenerationParams):
        self.engine, self.prompt_ids, self.params = engine, prompt_ids, params
        self.generation: Sequence | None = None

    def __iter__(self) -> Iterator[int]:
        events: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        seq = self.generation = self.engine.submit(self.prompt_ids, self.params, events.put)
        try:
            while (token := events.get()) is not None:
                yield token
            if seq.error is not None:
                raise seq.error
        finally:
            if not seq.finished:
                self.engine.abort(seq)
