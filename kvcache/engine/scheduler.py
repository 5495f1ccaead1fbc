"""Which sequences run in the next engine step, and how many tokens each computes.

Two queues, as in nano-vllm: ``waiting`` (FIFO; preempted sequences at the front) and ``running`` (oldest
first). ``schedule()`` fills one step under ``max_batched_tokens``: every running sequence's next tokens
first (a decode's one, or a prompt chunk: chunked prefill, capped by the ``pacing.Pacer`` while streams
decode), then waiting sequences in order while budget, ``max_seqs`` and free blocks allow. When blocks
run out the newest running sequence is preempted (recomputed later), so the oldest can always finish.
``chunked_prefill=False`` schedules whole prompts as nano-vllm does. The policy in full: docs/engine.md.
It does not run the model or sample (``model_runner``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from kvcache.engine.allocator import BlockAllocator
from kvcache.engine.pacing import Pacer
from kvcache.engine.sequence import Sequence, Status


@dataclass(frozen=True)
class SchedulerConfig:
    max_seqs: int = 16  # sequences running at once
    max_batched_tokens: int = 512  # tokens computed per step (decodes + prefill chunks)
    chunked_prefill: bool = True
    decode_slowdown: float = 2.0  # while streams decode, a step may take this × a decode step (0: no pacing)

    def __post_init__(self) -> None:
        if self.max_seqs < 1:
            raise ValueError("max_seqs must be at least 1")
        if self.max_batched_tokens < self.max_seqs:
            raise ValueError(
                f"max_batched_tokens ({self.max_batched_tokens}) must be at least max_seqs ({self.max_seqs}): "
                "every running sequence decodes one token per step"
            )
        Pacer(self.decode_slowdown, self.max_batched_tokens, min(4, self.max_batched_tokens))  # its checks


@dataclass
class Chunk:
    """``count`` tokens of ``seq`` from ``start``: ``seq.token_ids[start:start + count]``."""

    seq: Sequence
    start: int
    count: int

    @property
    def samples(self) -> bool:
        """Whether this chunk reaches the end of the sequence's tokens (its last row gives the next token)."""
        return self.start + self.count == len(self.seq)


class Scheduler:
    def __init__(self, config: SchedulerConfig, allocator: BlockAllocator):
        self.config = config
        self.allocator = allocator
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.preemptions = 0
        self.pacer = Pacer(
            config.decode_slowdown, config.max_batched_tokens, min(4, config.max_batched_tokens)
        )
        self._prompt_budget = config.max_batched_tokens  # prompt tokens left in the step being scheduled

    def add(self, seq: Sequence) -> None:
        seq.status = Status.WAITING
        self.waiting.append(seq)

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> list[Chunk]:
        self.allocator.begin_step()
        if not self.config.chunked_prefill:  # nano-vllm's order: a step of whole prompts when any fit
            admitted = self._admit([], self.config.max_batched_tokens)
            return admitted if admitted else self._continue([], self.config.max_batched_tokens)[0]
        chunks, budget = [], self.config.max_batched_tokens
        self._prompt_budget = self.pacer.budget(decoding=any(s.num_pending == 1 for s in self.running))
        chunks, budget, preempted = self._continue(chunks, budget)
        return chunks if preempted else self._admit(chunks, budget)

    def _continue(self, chunks: list[Chunk], budget: int) -> tuple[list[Chunk], int, bool]:
        """The running sequences' next tokens, oldest first, preempting the newest when blocks run out."""
        index, preempted = 0, False
        while index < len(self.running) and budget > 0:
            seq = self.running[index]
            count = self._chunk_size(seq, budget, alone=not chunks)
            if count == 0:
                index += 1
                continue
            while self.allocator.blocks_needed(seq, count) > self.allocator.num_free:
                preempted = True
                self.preempt(self.running[-1])  # the newest: never one already scheduled in this step
                if seq.status is Status.WAITING:
                    break
            if seq.status is Status.WAITING:
                break  # seq was the newest: no one is left after it
            chunks.append(self._take(seq, count))
            budget -= count
            index += 1
        return chunks, budget, preempted

    def _admit(self, chunks: list[Chunk], budget: int) -> list[Chunk]:
        """Waiting sequences in order, with their cached prefix attached, while budget, seats and blocks
        allow (keeping one free block per running sequence for its next decode)."""
        while self.waiting and budget > 0 and len(self.running) < self.config.max_seqs:
            seq = self.waiting[0]
            self.allocator.match_prefix(seq)
            count = self._chunk_size(seq, budget, alone=not chunks)
            reserve = len(self.running)
            if count == 0 or self.allocator.blocks_needed(seq, count) + reserve > self.allocator.num_free:
                self.allocator.free(seq)  # hand the attached prefix back; try again next step
                break
            self.waiting.popleft()
            self.allocator.admitted(seq)
            seq.status = Status.RUNNING
            self.running.append(seq)
            chunks.append(self._take(seq, count))
            budget -= count
        return chunks

    def _take(self, seq: Sequence, count: int) -> Chunk:
        if count > 1 or seq.num_pending > 1:
            self._prompt_budget -= count
        chunk = Chunk(seq, seq.num_computed, count)
        self.allocator.allocate(seq, count)
        return chunk

    def _chunk_size(self, seq: Sequence, budget: int, alone: bool) -> int:
        pending = seq.num_pending
        if (
            not self.config.chunked_prefill
        ):  # unchunked: a prompt over the budget runs whole, in a step of its own
            return pending if pending <= budget or alone else 0
        if pending == 1:
            return 1
        return max(0, min(pending, budget, self._prompt_budget))

    def preempt(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.allocator.free(seq)
        seq.status = Status.WAITING
        seq.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(seq)

    def finish(self, seq: Sequence, reason: str | None) -> None:
        """Take ``seq`` out of either queue and free its blocks at once (finished, aborted or failed)."""
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        self.allocator.free(seq)
        seq.status = Status.FINISHED
        seq.finish_reason = seq.finish_reason or reason
