"""Choosing the next token from logits: greedy (temperature 0), or temperature + top-p with a seed.

The parameters are ``params.SamplingParams`` (temperatures below ``params.GREEDY_BELOW`` are greedy).
Top-p keeps the smallest set of most likely tokens whose probabilities sum to at least ``top_p``.
A seeded ``torch.Generator`` per request makes sampled output reproducible. It does not apply
repetition penalties, top-k or logit biases.
"""

from __future__ import annotations

import torch

from kvcache.params import SamplingParams


class Sampler:
    def __init__(self, params: SamplingParams):
        self.params = params
        self.generator = torch.Generator()
        if params.seed is not None:
            self.generator.manual_seed(params.seed)
        else:
            self.generator.seed()

    def __call__(self, logits: torch.Tensor) -> int:
        """logits: [vocab] (fp32)."""
        if self.params.greedy:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.float() / self.params.temperature, dim=-1)
        if self.params.top_p < 1.0:
            sorted_probs, order = torch.sort(probs, descending=True)
            cumulative = torch.cumsum(sorted_probs, dim=-1)
            # drop a token once the more likely ones already reach top_p (the top token always stays)
            sorted_probs[(cumulative - sorted_probs) >= self.params.top_p] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        return int(torch.multinomial(probs / probs.sum(), 1, generator=self.generator))
