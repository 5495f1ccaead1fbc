"""How many prompt tokens a step may carry while other sequences are decoding, from measured step times.

On a GPU a 512-token prompt chunk costs about what a decode step costs; on a CPU prefill is compute-bound
(the demo model: about 0.15 ms a token for the weights against a ~4 ms decode step), so a fixed 512-token
chunk would make every running stream's next token wait ~20 decode steps. And a prompt token's cost
grows with the context it attends to: at 4k tokens of history its attention alone costs ~1 ms on one
thread (37.7 MFLOP a token on the demo model, fp32), five times its matmuls, so a cost per token learnt
early in a long prompt is far too low by its end (a fixed floor of 16 tokens made those steps ~4× a
decode step). So the pacer is a feedback controller on the quantity it protects, the step's time: it
keeps a running average of a decode-only step (``decode_s``) and, after each step that carried prompt
tokens beside decodes, estimates the tokens that would have made that step take ``slowdown`` times a
decode step (``tokens · (slowdown - 1) · decode_s / extra``, ``extra`` being the step's time over a
decode step; at most twice the tokens it carried: no extrapolating far from what was measured); the cap
is a running average of those estimates (``SMOOTHING``), so one slow step, another process's, moves it
by a fraction, not to the floor. The cap thus follows the cost as the context grows, and settles where a
step's fixed prompt overhead plus its tokens fill the allowance, never under ``min_tokens`` (4: a long
prompt still advances a few tokens a step where one token's attention alone would fill the allowance).
On the 2-core reference CPU the prompt pass itself is what costs: a step of more than one row leaves the
model's one-row decode path (``Model._decode``) for the general one, where a 2–4-row matmul costs about as
much as that many one-row ones and SDPA adds each prompt token's attention, so a 2-token chunk alone
costs 1.4× a decode step at context 0 and 3× at 4k (one thread); the decode row riding along adds ~0.5×.
So the floor is where long prompts end up, and their steps run over 2×. Running the decode row as a
second, one-row pass beside the chunk instead costs a whole decode step (1×): measured 7–32% slower per
step at every context and chunk size, so it is not done.
With no stream decoding the cap is the scheduler's whole budget (prefill at full speed). ``slowdown = 0``
turns pacing off (a fixed budget, as on a GPU). This module only does arithmetic; the loop feeds it
timings.
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
