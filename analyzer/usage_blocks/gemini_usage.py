"""Gemini's ``usageMetadata`` → :class:`~analyzer.usage_blocks.counts.Usage`.

``promptTokenCount`` includes ``cachedContentTokenCount`` (implicit and explicit cache reads
alike); ``toolUsePromptTokenCount`` (what a tool such as search fed back) is billed as input too,
and ``thoughtsTokenCount`` as output. No cache writes are read from it.

It prices nothing. See docs/money.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.usage_blocks.block_reader import BlockReader
from analyzer.usage_blocks.counts import Usage

CACHE_KEYS = frozenset(
    {"cachedContentTokenCount", "cacheTokensDetails", "cached_content_token_count", "cache_tokens_details"}
)


def from_gemini(u: Mapping[str, Any]) -> Usage:
    """Gemini ``usageMetadata``: ``promptTokenCount`` includes ``cachedContentTokenCount``;
    tool-use prompt tokens are input, thoughts are output."""
    n = BlockReader()
    prompt = n(u, "promptTokenCount") + n(u, "toolUsePromptTokenCount")
    n.unknown_cache_fields(u, CACHE_KEYS)
    cached = n.above("cachedContentTokenCount", n(u, "cachedContentTokenCount"), prompt)
    output = n(u, "candidatesTokenCount") + n(u, "thoughtsTokenCount")
    return n.usage(input_tokens=prompt, cached_tokens=cached, output_tokens=output)
