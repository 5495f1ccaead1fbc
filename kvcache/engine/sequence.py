"""One request inside the engine: its tokens, how many of them have KV in the pool, and its block table.

``token_ids`` is the prompt followed by every token generated so far; ``num_computed`` counts the leading
tokens whose K/V sit in the sequence's blocks. A step computes ``token_ids[num_computed:]`` (all of it,
or a chunk under the step's token budget); when it reaches the end, the last row's logits give the next
token. Prefill, chunked prefill, decode and recompute after preemption are all that one rule: a
preempted sequence keeps its tokens, drops its blocks (``num_computed = 0``) and computes them again
later, reusing whatever prefix blocks are still cached. Status moves WAITING → RUNNING → FINISHED
(and RUNNING → WAITING on preemption). This module does not allocate blocks (``allocator``) or pick
which sequences run (``scheduler``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from enum import Enum

from kvcache.layers.sampler import Sampler
from kvcache.params import GenerationParams, Timings


class Status(Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


_ids = itertools.count()


class Sequence:
    """``listener`` is called from the engine's loop thread with each new token id, then once with
    ``None`` when the sequence ends (``finish_reason`` and ``error`` set first)."""

    def __init__(
        self,
        prompt_ids: list[int],
        params: GenerationParams,
        max_new_tokens: int,
        listener: Callable[[int | None], None] | None = None,
    ):
        self.seq_id = next(_ids)
        self.token_ids = list(prompt_ids)
        self.num_prompt_tokens = len(prompt_ids)
        self.params = params
        self.max_new_tokens = max_new_tokens  # already clamped to the context
        self.listener = listener
        self.sampler = Sampler(params.sampling)
        self.status = Status.WAITING
        self.num_computed = 0
        self.block_table: list[int] = []
        self.block_hashes: list[bytes] = []  # chained hash of each published (full) block
        self.trimmed = 0  # head blocks freed behind a sliding window (their table entries are -1)
        self.slot_map = None  # torch tensor: the pool slot of each position the blocks cover (``step_batch``)
        self.prefill_kv = None  # torch tensor: a contiguous copy of its K/V while a long prompt is prefilled
        self.cached_tokens: int | None = None  # prompt tokens served from the prefix cache at first admission
        self.preemptions = 0
        self.finish_reason: str | None = None
        self.error: BaseException | None = None
        self.arrival = time.perf_counter()
        self.first_token_at: float | None = None
        self.last_token_at: float | None = None

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def tokens(self) -> list[int]:
        """The generated tokens (what the client receives)."""
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_new_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def num_pending(self) -> int:
        """Tokens still to compute before the next one can be sampled."""
        return len(self.token_ids) - self.num_computed

    @property
    def in_prefill(self) -> bool:
        return self.num_pending > 1

    @property
    def finished(self) -> bool:
        return self.status is Status.FINISHED

    @property
    def timings(self) -> Timings:
        """TTFT from arrival (queueing included, as a client sees it) to the first token; decode from the
        first token to the last."""
        t = Timings(prompt_tokens=self.num_prompt_tokens, cached_tokens=self.cached_tokens or 0)
        t.new_tokens = self.num_new_tokens
        if self.first_token_at is not None:
            t.prefill_s = self.first_token_at - self.arrival
            t.decode_s = (self.last_token_at or self.first_token_at) - self.first_token_at
            t.decode_steps = max(0, t.new_tokens - 1)
        return t

    def __repr__(self) -> str:
        return (
            f"Sequence({self.seq_id}, {self.status.value}, {len(self)} tokens, {self.num_computed} computed, "
            f"{len(self.block_table)} blocks)"
        )
