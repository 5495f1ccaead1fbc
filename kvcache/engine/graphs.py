"""Decode-only steps on static buffers, captured as CUDA graphs for a ladder of sizes (nano-vllm's way).

A step of B one-token rows runs at the smallest ladder batch ``>= B`` (rows past B are padding) and the
smallest key width ``>= `` its longest row's visible keys (powers of two from ``MIN_KEYS`` to the context),
so one graph serves many steps. Inputs live in buffers made once at the largest sizes (each graph reads
views of them): a step fills a pinned host copy, copies it over without waiting, and replays; the graph
also takes the greedy argmax, so the host reads back only the sampled tokens. Graphs are captured when a
size is first needed (after an eager warm-up), all into one memory pool; a failed capture turns capture
off (``capture_error``, logged). With ``capture`` off (the CPU, ``--no-cuda-graphs``) the same static path
runs eagerly, as the tests do. It does not decide which steps qualify (``model_runner``) or sample.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from kvcache.caches.paged import BlockPool
from kvcache.layers.static_decode import PaddedDecode
from kvcache.models.llama import Model

MIN_KEYS = 256
log = logging.getLogger(__name__)


def batch_ladder(max_seqs: int) -> tuple[int, ...]:
    """1, 2, 4, 8, then every 16 up to ``max_seqs`` (and ``max_seqs`` itself)."""
    sizes = [b for b in (1, 2, 4, 8) if b < max_seqs] + list(range(16, max_seqs, 16))
    return tuple(sizes + [max_seqs])


def key_ladder(max_context: int, block_size: int) -> tuple[int, ...]:
    """Powers of two from ``MIN_KEYS`` while below the context, then the context rounded up to a block."""
    top = -(-max_context // block_size) * block_size
    sizes, size = [], MIN_KEYS
    while size < top:
        sizes.append(size)
        size *= 2
    return tuple(sizes + [top])


def pick(ladder: tuple[int, ...], needed: int) -> int | None:
    """The smallest size in ``ladder`` that holds ``needed``; None when none does."""
    return next((size for size in ladder if size >= needed), None)


@dataclass
class DecodeRow:
    token: int
    position: int
    write_slot: int
    key_slots: torch.Tensor  # host [count] long: the pool slots the row's query sees, oldest first


class _Sized:
    """One (batch, keys) size: views of the shared buffers, the attention context, and its graph."""

    def __init__(self, owner: DecodeGraphs, batch: int, keys: int):
        self.batch, self.keys = batch, keys
        inputs = owner.inputs
        self.ids, self.positions, self.write_slots, self.counts = (inputs[i, :batch] for i in range(4))
        self.key_slots = owner.key_slots[: batch * keys].view(batch, keys)
        self.context = PaddedDecode(owner.pool, self.write_slots, self.key_slots, self.counts)
        self.graph = None
        self.logits = self.greedy = None

    def forward(self, model: Model) -> tuple[torch.Tensor, torch.Tensor]:
        self.context.begin()
        logits = model.decode_rows(self.ids, self.positions, self.context)
        return logits, logits.argmax(dim=-1)


class DecodeGraphs:
    def __init__(self, model: Model, pool: BlockPool, max_seqs: int, capture: bool):
        if capture and pool.device.type != "cuda":
            raise ValueError("CUDA graphs need the model and pool on a CUDA device")
        self.model, self.pool, self.capture = model, pool, capture
        self.batches = batch_ladder(max_seqs)
        self.widths = key_ladder(model.max_context, pool.block_size)
        device, pin = pool.device, pool.device.type == "cuda"
        top_batch, top_keys = self.batches[-1], self.widths[-1]
        self.inputs = torch.zeros(
            (4, top_batch), dtype=torch.long, device=device
        )  # ids, positions, slots, counts
        self.key_slots = torch.full((top_batch * top_keys,), pool.pad_slot, dtype=torch.long, device=device)
        self.host_inputs = torch.zeros((4, top_batch), dtype=torch.long, pin_memory=pin)
        self.host_keys = torch.full((top_batch * top_keys,), pool.pad_slot, dtype=torch.long, pin_memory=pin)
        self.sizes: dict[tuple[int, int], _Sized] = {}
        self.graph_pool = None
        self.captured = 0
        self.capture_error: str | None = None  # why capture stopped (then every size runs eagerly)

    def fits(self, rows: int, keys: int) -> bool:
        return rows <= self.batches[-1] and keys <= self.widths[-1]

    def size_for(self, rows: int, keys: int) -> tuple[int, int]:
        batch, width = pick(self.batches, rows), pick(self.widths, keys)
        if batch is None or width is None:
            raise ValueError(f"{rows} rows of up to {keys} keys exceed the ladder's largest size")
        return batch, width

    @torch.inference_mode()
    def run(self, rows: list[DecodeRow]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits [len(rows), vocab] (fp32) and their greedy argmax [len(rows)], both on the device."""
        batch, width = self.size_for(len(rows), max(r.key_slots.shape[0] for r in rows))
        sized = self.sizes.get((batch, width))
        if sized is None:
            sized = self.sizes[(batch, width)] = _Sized(self, batch, width)
        self._fill(rows, sized)
        if self.capture and sized.graph is None:
            try:
                self._capture(sized)
            except RuntimeError as exc:  # a kernel that cannot be captured: the same path, eagerly, said so
                self.capture, self.capture_error = False, f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                log.exception(
                    "CUDA graph capture failed at batch %d, %d keys: decoding eagerly", batch, width
                )
        if not self.capture:
            logits, greedy = sized.forward(self.model)
        else:
            sized.graph.replay()
            logits, greedy = sized.logits, sized.greedy
        return logits[: len(rows)], greedy[: len(rows)]

    def _fill(self, rows: list[DecodeRow], sized: _Sized) -> None:
        host, keys, pad = self.host_inputs, self.host_keys, self.pool.pad_slot
        batch, width, count = sized.batch, sized.keys, len(rows)
        host[:, count:] = torch.tensor([[0], [0], [pad], [1]])  # padding rows: token 0 at the pad slot
        columns = [(r.token, r.position, r.write_slot, r.key_slots.shape[0]) for r in rows]
        host[:, :count] = torch.tensor(columns, dtype=torch.long).t()
        grid = keys[: batch * width].view(batch, width)
        grid.fill_(pad)
        for i, row in enumerate(rows):
            grid[i, : row.key_slots.shape[0]] = row.key_slots
        # pinned memory: the copies overlap with the host; the step's one read-back orders the next fill
        self.inputs.copy_(host, non_blocking=True)  # all of it (2 KiB at 64 rows): one contiguous copy
        self.key_slots[: batch * width].copy_(keys[: batch * width], non_blocking=True)

    def _capture(self, sized: _Sized) -> None:
        """Warm the size up eagerly on a side stream (its writes are this step's own K/V: idempotent), then
        capture it into the shared pool."""
        stream = torch.cuda.Stream(self.pool.device)
        stream.wait_stream(torch.cuda.current_stream(self.pool.device))
        with torch.cuda.stream(stream):
            sized.forward(self.model)
        torch.cuda.current_stream(self.pool.device).wait_stream(stream)
        graph, current = torch.cuda.CUDAGraph(), torch.cuda.current_stream(self.pool.device)
        try:
            with torch.cuda.graph(graph, pool=self.graph_pool, capture_error_mode="thread_local"):
                sized.logits, sized.greedy = sized.forward(self.model)
        except BaseException:
            torch.cuda.set_stream(current)  # a failed capture_end leaves the capture stream current
            sized.logits = sized.greedy = None
            raise
        if self.graph_pool is None:
            self.graph_pool = graph.pool()
        sized.graph = graph
        self.captured += 1
