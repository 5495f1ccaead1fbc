"""Gemini's implicit caching, applied to an estimated token stream.

Rules emulated (the numbers live in :mod:`analyzer.cache_rules`), one a line:
- Gemini 2.5+ caches every prompt; the same key and model read the longest cached prefix once it reaches the model's minimum (2,048 for 2.5 Flash / Pro, 4,096 later).
- reported as ``usageMetadata.cachedContentTokenCount`` INSIDE ``promptTokenCount``; 1.x and 2.0 never hit.
- assumed (Google publishes neither): whole 128-token blocks, an unused prefix kept ``gemini_ttl_s`` (5 minutes).
- assumed: the prompt is the segments in Gemini's cache order (cachedContent, systemInstruction, tools, contents), 4 bytes a token.
This module does not render replies. See docs/emulator.md.
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


def apply_gemini_cache(
    cache: ProviderCache, key: bytes, model: str, prompt: bytes, ttl_s: float
) -> PromptCacheResult:
    """Read the longest cached prefix of ``prompt``, then cache the prompt's blocks."""
    prompt_tokens = estimate_tokens(len(prompt))
    minimum = gemini_min_tokens(model)
    if not gemini_implicit(model) or prompt_tokens < minimum:
        return PromptCacheResult(prompt_tokens, 0)
    root = key + b"\x00gemini\x00" + model.encode("utf-8", "replace")
    return PromptCacheResult(
        prompt_tokens, read_and_record(cache, block_hashes(prompt, root, prompt_tokens), minimum, ttl_s)
    )
