"""OpenAI's automatic prompt caching (before GPT-5.6), applied to an estimated token stream.

Rules emulated (the numbers live in :mod:`analyzer.cache_rules`):
- every prompt of at least 1,024 tokens is cached automatically;
- a later request with the same leading tokens reads the longest cached prefix, in 128-token steps;
- an unused prefix expires after the TTL (``prompt_cache_retention: "24h"`` extends it);
- cached tokens are reported INSIDE ``prompt_tokens``;
- assumed: token ``i`` is bytes ``[4i, 4i+4)`` of the segments; blocks chained from (API key, model).
GPT-5.6+ is :mod:`.openai_breakpoint_cache` (:mod:`.openai_prompt_cache` picks). It renders no
reply and reports no usage in a wire format. See docs/emulator.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import xxhash

from analyzer.cache_rules import OPENAI_MIN_TOKENS, OPENAI_STEP_TOKENS
from analyzer.segments import segments_for
from analyzer.tokens import BYTES_PER_TOKEN, estimate_tokens
from proxy.emulator.provider_cache import ProviderCache

BLOCK_TOKENS = OPENAI_STEP_TOKENS
BLOCK_BYTES = BLOCK_TOKENS * BYTES_PER_TOKEN


@dataclass(frozen=True, slots=True)
class PromptCacheResult:
    """``prompt_tokens`` counts every prompt token (cached and written ones included); writes are
    GPT-5.6+ only (:mod:`proxy.emulator.openai_breakpoint_cache`), ``cache_write_12h_tokens`` of
    them with a 12h TTL; ``breakpoints``: GPT-5.6+ rules, so the usage reports writes."""

    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int = 0
    cache_write_12h_tokens: int = 0
    breakpoints: bool = False

    @property
    def cache_write_30m_tokens(self) -> int:
        return self.cache_write_tokens - self.cache_write_12h_tokens


def rendered_prompt(route: str, body: dict[str, Any]) -> bytes:
    return b"".join(seg.data for seg in segments_for("openai", route, body))


def block_hashes(prompt: bytes, root: bytes, prompt_tokens: int) -> list[bytes]:
    """Chained hashes of the full 128-token blocks before the prompt's last token."""
    n_blocks = max(0, prompt_tokens - 1) // BLOCK_TOKENS
    hashes: list[bytes] = []
    prev = root
    for i in range(n_blocks):
        prev = xxhash.xxh3_128_digest(prev + prompt[i * BLOCK_BYTES : (i + 1) * BLOCK_BYTES])
        hashes.append(prev)
    return hashes


def apply_openai_cache(
    cache: ProviderCache, key: bytes, model: str, prompt: bytes, ttl_s: float
) -> PromptCacheResult:
    """Read the longest cached prefix of ``prompt``, then cache the prompt's blocks."""
    prompt_tokens = estimate_tokens(len(prompt))
    if prompt_tokens < OPENAI_MIN_TOKENS:
        return PromptCacheResult(prompt_tokens, 0)
    root = key + b"\x00openai\x00" + model.encode("utf-8", "replace")
    return PromptCacheResult(
        prompt_tokens,
        read_and_record(cache, block_hashes(prompt, root, prompt_tokens), OPENAI_MIN_TOKENS, ttl_s),
    )


def read_and_record(cache: ProviderCache, hashes: list[bytes], minimum: int, ttl_s: float) -> int:
    """Cached tokens for a block chain (the longest stored run, if it reaches ``minimum``),
    then every block stored: how OpenAI's and Gemini's implicit caches both behave here."""
    hit = 0
    for h in hashes:
        if cache.get(h) is None:
            break
        hit += 1
    for h in hashes:
        cache.put(h, ttl_s)
    return hit * BLOCK_TOKENS if hit * BLOCK_TOKENS >= minimum else 0
