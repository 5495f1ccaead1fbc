"""The generation loop: prefill once, then decode one token per step, streaming each token as it comes.

``Generation`` is an iterator of token ids. With a cache the prompt is prefilled in one pass (after any
prefix the cache already holds) and every later step feeds one token; with ``cache=None`` every step
recomputes the whole sequence (the seeds' "no cache" experiment). Stops at a stop token (not yielded),
at ``max_new_tokens``, or at the model's context. ``timings`` holds TTFT (prefill + first token) and the
decode rate. It does not tokenize text or batch sequences.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from kvcache.caches.base import KVCache
from kvcache.errors import ContextLengthError
from kvcache.layers.sampler import Sampler
from kvcache.models.llama import Model
from kvcache.params import GenerationParams, Timings


def check_prompt(model: Model, prompt_ids: list[int]) -> None:
    if not prompt_ids:
        raise ContextLengthError("the prompt is empty: at least one token is needed")
    if len(prompt_ids) >= model.max_context:
        raise ContextLengthError(
            f"the prompt has {len(prompt_ids)} tokens; this model's context is {model.max_context} tokens "
            "(prompt plus at least one new token)"
        )


class Generation:
    def __init__(self, model: Model, prompt_ids: list[int], params: GenerationParams, cache: KVCache | None):
        check_prompt(model, prompt_ids)
        self.model, self.prompt_ids, self.params, self.cache = model, list(prompt_ids), params, cache
        self.tokens: list[int] = []
        self.finish_reason: str | None = None
        self.timings = Timings(prompt_tokens=len(prompt_ids))
        self.sampler = Sampler(params.sampling)

    def __iter__(self) -> Iterator[int]:
        budget = min(self.params.max_new_tokens, self.model.max_context - len(self.prompt_ids))
        start = time.perf_counter()
        logits = self._first_logits()
        token = self.sampler(logits[-1])
        self.timings.prefill_s = time.perf_counter() - start
        while True:
            if token in self.params.stop_token_ids:
                self.finish_reason = "stop"
                break
            self.tokens.append(token)
            self.timings.new_tokens = len(self.tokens)
            yield token
            if len(self.tokens) >= budget:
                self.finish_reason = "length"
                break
            step_start = time.perf_counter()  # only the model's time counts, not the consumer's
            token = self.sampler(self._next_logits(token)[-1])
            self.timings.decode_s += time.perf_counter() - step_start
            self.timings.decode_steps += 1

    def _first_logits(self):
        if self.cache is None:
            return self.model.forward(self.prompt_ids)
        cached = self.cache.match_prefix(self.prompt_ids)
        self.timings.cached_tokens = cached
        return self.model.forward(self.prompt_ids[cached:], self.cache)

    def _next_logits(self, token: int):
        if self.cache is None:
            return self.model.forward(self.prompt_ids + self.tokens)
        return self.model.forward([token], self.cache)

    def run(self) -> list[int]:
        """Consume the whole generation; returns the new tokens."""
        for _ in self:
            pass
        return self.tokens
