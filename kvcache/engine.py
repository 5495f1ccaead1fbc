"""The server-side engine: one loaded model, its tokenizer, and a paged block pool shared by all requests.

Requests run one at a time (a lock around the model; torch uses ``threads`` threads inside each step),
and every request's KV lives in blocks of the shared pool, so a prompt that starts like an earlier one
reuses that prefix's blocks instead of recomputing them (reported as ``cached_tokens``). It does not
parse HTTP (see ``server``/``protocol``) and does not batch concurrent requests.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from kvcache.caches import BlockPool
from kvcache.dtypes import dtype_name
from kvcache.errors import ContextLengthError, EngineError
from kvcache.generate import Generation, GenerationParams, check_prompt
from kvcache.loader import load_model
from kvcache.tokenizer import ChatTokenizer


@dataclass(frozen=True)
class EngineConfig:
    model_path: str | None = None  # None: the demo model
    dtype: str = "auto"
    threads: int | None = None
    max_context: int | None = None
    block_size: int = 16
    kv_blocks: int | None = None  # None: 4 full contexts, capped at DEFAULT_POOL_BYTES; never under one context

    def __post_init__(self) -> None:
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be at least 1")
        if self.max_context is not None and self.max_context < 2:
            raise ValueError("max_context must be at least 2 tokens")
        if self.block_size < 1 or (self.kv_blocks is not None and self.kv_blocks < 1):
            raise ValueError("block_size and kv_blocks must be positive")


DEFAULT_POOL_BYTES = 2 * 2**30


def default_blocks(bytes_per_token: int, max_context: int, block_size: int) -> int:
    """Room for 4 contexts (prefixes of earlier requests stay shareable), at most 2 GiB, at least one context."""
    per_context = -(-max_context // block_size)
    affordable = DEFAULT_POOL_BYTES // (bytes_per_token * block_size)
    return max(per_context, min(4 * per_context, affordable))


def default_threads() -> int:
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8))


class Engine:
    def __init__(self, config: EngineConfig):
        from kvcache.demo import DEMO_NOTICE, ensure_demo_model

        self.config = config
        self.is_demo = config.model_path is None
        self.notice = DEMO_NOTICE if self.is_demo else None
        folder = ensure_demo_model() if self.is_demo else Path(config.model_path).expanduser()
        torch.set_num_threads(config.threads or default_threads())
        self.model = load_model(folder, config.dtype, config.max_context)
        self.tokenizer = ChatTokenizer.from_folder(folder)
        self.model_id = folder.name
        blocks = config.kv_blocks or default_blocks(
            self.model.config.kv_bytes_per_token(self.model.embed.element_size()), self.max_context, config.block_size
        )
        if blocks * config.block_size < self.max_context:
            raise EngineError(
                f"--kv-blocks {blocks} × --block-size {config.block_size} = {blocks * config.block_size} tokens is "
                f"less than one context ({self.max_context} tokens); raise --kv-blocks or lower --max-context"
            )
        try:
            self.pool = BlockPool(self.model.config, blocks, config.block_size, self.model.dtype)
        except RuntimeError as exc:  # torch: "can't allocate memory"
            raise EngineError(f"cannot allocate a KV pool of {blocks} blocks: {str(exc).splitlines()[0]}") from None
        self.stop_ids = frozenset(self.model.config.eos_token_ids) | frozenset(
            i for i in (self.tokenizer.token_id(self.tokenizer.eos_token),) if i is not None
        )
        self.lock = threading.Lock()

    @property
    def max_context(self) -> int:
        return self.model.max_context

    def describe(self) -> str:
        c = self.model.config
        return (
            f"{self.model_id}: {c.model_type}, {c.num_layers} layers, {c.num_heads} heads / {c.num_kv_heads} KV heads, "
            f"{dtype_name(self.model.dtype)}, context {self.max_context}, KV pool {self.pool.nbytes / 2**20:.1f} MiB "
            f"({self.pool.manager.num_free} blocks of {self.pool.block_size} tokens) + up to "
            f"{c.kv_bytes_per_token(self.pool.k.element_size()) * self.max_context / 2**20:.1f} MiB working copy "
            "for the running request"
        )

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

    def run(self, prompt_ids: list[int], params: GenerationParams) -> EngineRun:
        return EngineRun(self, prompt_ids, params)


class EngineRun:
    """Iterate for token ids (the model lock is held while iterating); ``generation`` holds usage and timings."""

    def __init__(self, engine: Engine, prompt_ids: list[int], params: GenerationParams):
        self.engine, self.prompt_ids, self.params = engine, prompt_ids, params
        self.generation: Generation | None = None

    def __iter__(self) -> Iterator[int]:
        engine = self.engine
        with engine.lock:
            cache = engine.pool.sequence(engine.max_context)
            try:
                self.generation = Generation(engine.model, self.prompt_ids, self.params, cache)
                yield from self.generation
            finally:
                cache.release()
