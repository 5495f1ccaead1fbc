"""How many prompt tokens a step may carry while other sequences are decoding, from measured step times.

A feedback controller on the step's time: it keeps a running average of a decode-only step
(``decode_s``) and, after each step that carried prompt tokens beside decodes, estimates the tokens that
would have made that step take ``slowdown`` times a decode step (at most twice the tokens it carried);
the cap is a running average of those estimates (``SMOOTHING``), never under ``min_tokens``. With no
stream decoding the cap is the scheduler's whole budget; ``slowdown = 0`` turns pacing off. Why, with
the measurements: docs/engine.md. This module only does arithmetic; the loop feeds it timings.
"""

from __future__ import annotations

from dataclasses import dataclass

SMOOTHING = 0.2  # weight of the newest measurement in each running average


@dataclass
class Pacer:
    slowdown: float = 2.0
    max_tokens: int = 512
    min_tokens: int = 4
    first_guess: int = 32  # the cap before any paced step was timed
    decode_s: float | None = None  # a decode-only step
    tokens: float | None = None  # the cap the last paced step's time called for

    def __post_init__(self) -> None:
        if self.slowdown != 0 and self.slowdown <= 1:
            raise ValueError(f"slowdown must be above 1 (or 0: no pacing), got {self.slowdown}")
        if not 1 <= self.min_tokens <= self.max_tokens:
            raise ValueError("min_tokens must be between 1 and max_tokens")

    def budget(self, decoding: bool) -> int:
        """Prompt tokens the next step may carry."""
        if not decoding or not self.slowdown or self.decode_s is None:
            return self.max_tokens
        tokens = min(self.first_guess, self.max_tokens) if self.tokens is None else int(self.tokens)
        return max(self.min_tokens, min(self.max_tokens, tokens))

    def record(self, seconds: float, decodes: int, prompt_tokens: int) -> None:
        """One step's wall time, with its decode rows and prompt-chunk tokens."""
        if prompt_tokens == 0:
            if decodes:
                self.decode_s = _average(self.decode_s, seconds)
            return
        if not decodes or not self.slowdown or self.decode_s is None:
            return  # nothing was protected: the step says nothing about the cap
        allowance = (self.slowdown - 1) * self.decode_s
        fits = min(2 * prompt_tokens, prompt_tokens * allowance / max(seconds - self.decode_s, 1e-6))
        self.tokens = _average(self.tokens, max(float(self.min_tokens), min(float(self.max_tokens), fits)))


def _average(old: float | None, new: float) -> float:
    return new if old is None else (1 - SMOOTHING) * old + SMOOTHING * new
