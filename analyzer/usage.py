"""Every provider's usage block, normalised into one :class:`Usage`: the public entry.

``input_tokens`` counts every prompt token read, cached reads and writes included (Anthropic's
are summed to match); ``cached_tokens``, ``cache_write_tokens`` (split by TTL) and
``output_tokens`` follow. Unexpected fields or values are named in ``Usage.drift``; absurd
numbers are sanitised in one place (:mod:`analyzer.usage_blocks.block_reader`) and named in
``Usage.flags`` (capped at :data:`MAX_TOKENS`). A drifted or flagged usage is priced null.
Each provider's reader is in :mod:`analyzer.usage_blocks`; :func:`from_any` guesses which.

It does NOT price anything (:mod:`analyzer.pricing`). See docs/money.md for the definitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.usage_blocks.anthropic_usage import compaction_entries, from_anthropic, merge_anthropic_stream
from analyzer.usage_blocks.counts import MAX_TOKENS, Usage
from analyzer.usage_blocks.gemini_usage import from_gemini
from analyzer.usage_blocks.openai_usage import from_openai_chat, from_openai_responses

__all__ = [
    "MAX_TOKENS",
    "Usage",
    "compaction_entries",
    "from_anthropic",
    "from_any",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "merge_anthropic_stream",
]


def from_any(u: Mapping[str, Any]) -> Usage | None:
    """Recognise a usage block by its field names (for logs of unknown origin)."""
    if not isinstance(u, Mapping):
        return None
    if "promptTokenCount" in u:
        return from_gemini(u)
    if "prompt_tokens" in u or "prompt_cache_hit_tokens" in u:
        return from_openai_chat(u)
    if "cache_read_input_tokens" in u or "cache_creation_input_tokens" in u:
        return from_anthropic(u)
    if "input_tokens_details" in u:
        return from_openai_responses(u)
    if "input_tokens" in u:
        # Ambiguous: Anthropic and Responses both say input_tokens; without cache fields
        # the two readings agree.
        return from_anthropic(u)
    return None
