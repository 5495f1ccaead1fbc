"""How many prompt tokens a step may carry while other sequences are decoding, from measured step times.

On a GPU a 512-token prompt chunk costs about what a decode step costs; on a CPU prefill is compute-bound
and linear in tokens (the demo model: about 0.3 ms a token against a ~3.5 ms decode step), so a fixed
512-token chunk would make every running stream's next token wait ~50 decode steps. The pacer keeps two
running averages: the time of a decode-only step, and the extra time each prompt token adds to a step;
while any sequence decodes, a step's prompt tokens are capped so the step takes at most ``slowdown``
times a decode-only step (``(slowdown - 1) · decode_s / token_s``, at least ``min_tokens``). With no
stream decoding the cap is the scheduler's whole budget (prefill at full speed). ``slowdown = 0`` turns
pacing off (a fixed budget, as on a GPU). This module only does arithmetic; the loop feeds it timings.
"""

from __future__ import annotations

from dataclasses import dataclass

SMOOTHING = 0.2  # weight of the newest measurement in each running average


@dataclass
class Pacer:
    slowdown: float = 2.0
    max_tokens: int = 512
    min_tokens: int = 16
    first_guess: int = 64  # the cap before any prompt token was timed
    decode_s: float | None = None  # a decode-only step
    token_s: float | None = None  # the extra time of one prompt token in a step

    def __post_init__(self) -> None:
        if self.slowdown != 0 and self.slowdown <= 1:
            raise ValueError(f"slowdown must be above 1 (or 0: no pacing), got {self.slowdown}")
        if not 1 <= self.min_tokens <= self.max_tokens:
            raise ValueError("min_tokens must be between 1 and max_tokens")

    def budget(self, decoding: bool) -> int:
        """Prompt tokens the next step may carry."""
        if not decoding or not self.slowdown or self.decode_s is None:
            return self.max_tokens
        if self.token_s is None:
            return min(self.first_guess, self.max_tokens)
        tokens = int((self.slowdown - 1) * self.decode_s / self.token_s)
        return max(self.min_tokens, min(self.max_tokens, tokens))

    def record(self, seconds: float, decodes: int, prompt_tokens: int) -> None:
        """One step's wall time, with its decode rows and prompt-chunk tokens."""
        if prompt_tokens == 0:
            if decodes:
                self.decode_s = _average(self.decode_s, seconds)
            return
        base = self.decode_s if decodes and self.decode_s is not None else 0.0
        self.token_s = _average(self.token_s, max(seconds - base, 0.0) / prompt_tokens)


def _average(old: float | None, new: float) -> float:
    return new if old is None else (1 - SMOOTHING) * old + SMOOTHING * new
