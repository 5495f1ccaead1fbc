"""Choosing the next token from logits: greedy (temperature 0), or temperature + top-p with a seed.

The parameters are ``params.SamplingParams`` (temperatures below ``params.GREEDY_BELOW`` are greedy).
Top-p keeps the smallest set of most likely tokens whose probabilities sum to at least ``top_p``.
A seeded ``torch.Generator`` per request, on the logits' device, makes sampled output reproducible (for one
device). ``sample`` leaves the token on the device, so a batch reads all its tokens back at once. It does not apply
repetition penalties, top-k or logit biases.
"""

from __future__ import annotations

import torch

from kvcache.params import SamplingParams


class Sampler:
    def __init__(self, params: SamplingParams):
        self.params = params
        self.generator = self._new_generator(torch.device("cpu"))

    def _new_generator(self, device: torch.device) -> torch.Generator:
        generator = torch.Generator(device=device)
        if self.params.seed is not None:
            generator.manual_seed(self.params.seed)
        else:
            generator.seed()
        return generator

    def __call__(self, logits: torch.Tensor) -> int:
        """logits: [vocab] (fp32)."""
        return int(self.sample(logits))

    def sample(self, logits: torch.Tensor) -> torch.Tensor:
        """The token as a 0-dim tensor on the logits' device (read back by the caller, with the others)."""
        if self.params.greedy:
            return torch.argmax(logits)
        if self.generator.device != logits.device:  # a GPU engine: the seeded stream lives there
            self.generator = self._new_generator(logits.device)
        probs = torch.softmax(logits.float() / self.params.temperature, dim=-1)
        if self.params.top_p < 1.0:
            sorted_probs, order = torch.sort(probs, descending=True)
            cumulative = torch.cumsum(sorted_probs, dim=-1)
            # drop a token once the more likely ones already reach top_p (the top token always stays)
            sorted_probs[(cumulative - sorted_probs) >= self.params.top_p] = 0.0
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        return torch.multinomial(probs / probs.sum(), 1, generator=self.generator)[0]
