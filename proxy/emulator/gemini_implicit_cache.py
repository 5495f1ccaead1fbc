"""Gemini's implicit caching, applied to an estimated token stream.

Rules emulated (the numbers live in :mod:`analyzer.cache_rules`): Gemini 2.5 and newer
models cache every prompt automatically; a later request with the same leading tokens, from
the same API key and to the same model, reads the longest cached prefix once it reaches the
model's minimum (2,048 tokens for 2.5 Flash / Pro, 4,096 for later models), reported as
``usageMetadata.cachedContentTokenCount`` INSIDE ``promptTokenCount``. Older models (1.x,
2.0) never hit. Google publishes neither the granularity of a hit nor the lifetime of an
implicit entry: the emulator counts whole 128-token blocks (as for OpenAI) and keeps an
unused prefix ``gemini_ttl_s`` (5 minutes).

The prompt is the concatenation of the request's segments in Gemini's cache order
(:func:`analyzer.segments.gemini_segments`: cachedContent, systemInstruction, tools,
contents), 4 bytes a token. This module does not render replies.
"""

from __future__ import annotations

from typing import Any

from analyzer.cache_rules import gemini_implicit, gemini_min_tokens
from analyzer.segments import gemini_segments
from analyzer.tokens import estimate_tokens
from proxy.emulator.openai_cache import PromptCacheResult, block_hashes, read_and_record
from proxy.emulator.provider_cache import ProviderCache


def rendered_prompt(body: dict[str, Any]) -> bytes:
    return b"".join(seg.data for seg in gemini_segments(body))


def apply_gemini_cache(cache: ProviderCache, key: bytes, model: str, prompt: bytes, ttl_s: float) -> PromptCacheResult:
    """Read the longest cached prefix of ``prompt``, then cache the prompt's blocks."""
    prompt_tokens = estimate_tokens(len(prompt))
    minimum = gemini_min_tokens(model)
    if not gemini_implicit(model) or prompt_tokens < minimum:
        return PromptCacheResult(prompt_tokens, 0)
    root = key + b"\x00gemini\x00" + model.encode("utf-8", "replace")
    return PromptCacheResult(prompt_tokens, read_and_record(cache, block_hashes(prompt, root, prompt_tokens), minimum, ttl_s))
