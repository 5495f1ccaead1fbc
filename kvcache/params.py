"""What a caller asks of a generation and what it measured: ``SamplingParams``, ``GenerationParams``,
``Timings``.

Plain frozen dataclasses (and one mutable record of timings) shared by the single-sequence loop
(``generate``), the engine (``engine``) and the HTTP server (``server``). Each checks its own fields.
Temperatures below ``GREEDY_BELOW`` count as greedy (as in vLLM): dividing by them overflows the logits.
It imports nothing of the network or the engine, and nothing of torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GREEDY_BELOW = 1e-5


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.temperature <= 100.0:
            raise ValueError(f"temperature must be between 0 and 100, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_BELOW


@dataclass(frozen=True)
class GenerationParams:
    max_new_tokens: int = 256
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stop_token_ids: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")


@dataclass
class Timings:
    prompt_tokens: int = 0
    cached_tokens: int = 0
    new_tokens: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    decode_steps: int = 0  # one-token forward passes after the prefill

    @property
    def ttft_s(self) -> float:
        return self.prefill_s

    @property
    def prefill_tokens_per_s(self) -> float:
        computed = self.prompt_tokens - self.cached_tokens
        return computed / self.prefill_s if self.prefill_s > 0 else 0.0

    @property
    def decode_tokens_per_s(self) -> float:
        return self.decode_steps / self.decode_s if self.decode_s > 0 else 0.0
