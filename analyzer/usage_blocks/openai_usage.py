"""OpenAI's usage blocks → :class:`~analyzer.usage_blocks.counts.Usage`: Chat Completions (and
the OpenAI-compatible ones: DeepSeek's, Groq's) and the Responses API.

Both count cached reads and GPT-5.6+'s cache writes inside the prompt; Responses splits the
writes by TTL (``ttl_30m_tokens``, ``ttl_12h_tokens``). A cache field not listed here is drift.

It prices nothing. See docs/money.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.usage_blocks.block_reader import BlockReader, note_key
from analyzer.usage_blocks.counts import Usage

#: DeepSeek's
CHAT_CACHE_KEYS = frozenset({"prompt_cache_hit_tokens", "prompt_cache_miss_tokens"})
CHAT_DETAIL_CACHE_KEYS = frozenset({"cached_tokens", "cache_write_tokens"})
RESPONSES_DETAIL_CACHE_KEYS = frozenset({"cached_tokens", "cache_write_tokens", "cache_write_tokens_details"})
RESPONSES_WRITE_TTLS = frozenset({"ttl_30m_tokens", "ttl_12h_tokens"})


def from_openai_chat(u: Mapping[str, Any]) -> Usage:
    """Chat Completions / Completions usage (also DeepSeek's and Groq's OpenAI-compatible ones);
    GPT-5.6+ reports writes in ``prompt_tokens_details.cache_write_tokens``."""
    n = BlockReader()
    prompt = n(u, "prompt_tokens")
    details = u.get("prompt_tokens_details")
    cached = n(details, "cached_tokens")
    write = n(details, "cache_write_tokens")
    n.unknown_cache_fields(u, CHAT_CACHE_KEYS)
    n.unknown_cache_fields(details, CHAT_DETAIL_CACHE_KEYS, "prompt_tokens_details.")
    if "prompt_cache_hit_tokens" in u:
        # DeepSeek's spelling
        cached = n(u, "prompt_cache_hit_tokens")
        prompt = prompt or cached + n(u, "prompt_cache_miss_tokens")
    cached = n.above("cached_tokens", cached, prompt)
    write = n.above("cache_write_tokens", write, prompt - cached)
    return n.usage(
        input_tokens=prompt,
        cached_tokens=cached,
        cache_write_tokens=write,
        output_tokens=n(u, "completion_tokens"),
    )


def from_openai_responses(u: Mapping[str, Any]) -> Usage:
    """Responses API usage (also ``/v1/responses/compact``'s): ``input_tokens`` includes
    ``input_tokens_details.cached_tokens`` and ``cache_write_tokens`` (GPT-5.6+), whose
    ``cache_write_tokens_details`` splits them by TTL (``ttl_30m_tokens``, ``ttl_12h_tokens``)."""
    n = BlockReader()
    prompt = n(u, "input_tokens")
    details = u.get("input_tokens_details")
    cached = n.above("cached_tokens", n(details, "cached_tokens"), prompt)
    write = n.above("cache_write_tokens", n(details, "cache_write_tokens"), prompt - cached)
    n.unknown_cache_fields(u, frozenset())
    n.unknown_cache_fields(details, RESPONSES_DETAIL_CACHE_KEYS, "input_tokens_details.")
    write_12h = 0
    by_ttl = details.get("cache_write_tokens_details") if isinstance(details, Mapping) else None
    if isinstance(by_ttl, Mapping):
        for key in by_ttl:
            if key not in RESPONSES_WRITE_TTLS:
                n.drift.append(
                    f"input_tokens_details.cache_write_tokens_details.{note_key(str(key))}:unknown_field"
                )
        write_12h = n(by_ttl, "ttl_12h_tokens")
        write = max(write, write_12h + n(by_ttl, "ttl_30m_tokens"))
        write = n.above("cache_write_tokens", write, prompt - cached)
    return n.usage(
        input_tokens=prompt,
        cached_tokens=cached,
        cache_write_tokens=write,
        cache_write_12h_tokens=min(write_12h, write),
        output_tokens=n(u, "output_tokens"),
    )
