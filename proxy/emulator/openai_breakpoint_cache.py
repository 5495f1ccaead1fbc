"""OpenAI GPT-5.6+ prompt caching: entries only at breakpoints, exact matches, billed writes.

Rules emulated (the contract: :mod:`analyzer.cache_rules.openai`): breakpoints at segment ends
(the implicit one at the newest message unless ``mode: "explicit"``, plus marked messages); up to
4 written, none under 1,024 tokens; of the latest 80 candidates the longest live one is read,
exactly at its boundary, and refreshed; ``cached_tokens`` = the prefix read,
``cache_write_tokens`` = the span up to the furthest breakpoint written, billed per TTL.
Beyond the contract: :data:`ASSUMPTIONS`.
It validates nothing (:mod:`proxy.emulator.openai_options`) and formats no usage.
See docs/emulator.md (the caching rules it applies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.cache_rules.openai import MAX_CONSIDERED, MAX_WRITES, MIN_TOKENS, TTL_S
from analyzer.prefix import chain
from analyzer.segments import Segment
from analyzer.tokens import estimate_tokens
from proxy.emulator.openai_cache import PromptCacheResult
from proxy.emulator.openai_options import CacheOptions
from proxy.emulator.provider_cache import ProviderCache

ASSUMPTIONS = """Assumptions of this emulator beyond :mod:`analyzer.cache_rules.openai`, one a line:
- Markers count per position: two marked parts of one message are one breakpoint (the longest TTL, as :mod:`analyzer.segments` records).
- The implicit breakpoint and a marker on the newest message coincide, each using one of the 4 writes; the entry keeps the longer TTL.
- An entry lives exactly its TTL from its last write or read (the provider's is a minimum).
- Entries are keyed by (API key, model), as before 5.6; ``prompt_cache_key`` and ``prompt_cache_retention`` change nothing.
"""


@dataclass(frozen=True, slots=True)
class Plan:
    """Where one request writes and where it may read (segment indexes, prompt order):
    ``writes`` segment index → TTL (``"30m"`` | ``"12h"``), ``candidates`` the latest
    MAX_CONSIDERED positions looked up, ascending."""

    writes: dict[int, str]
    candidates: tuple[int, ...]


def _longer(a: str | None, b: str) -> str:
    return b if a is None or TTL_S[b] > TTL_S[a] else a


def plan(segments: Sequence[Segment], options: CacheOptions) -> Plan:
    """The breakpoints a request writes and the positions it looks up (nothing: no caching)."""
    messages = [i for i, s in enumerate(segments) if s.kind == "message"]
    explicit = [(i, s.cache_control) for i, s in enumerate(segments) if s.cache_control in TTL_S]
    implicit = messages[-1] if messages and options.mode == "implicit" else None
    if implicit is None and not explicit:
        return Plan({}, ())
    keep = MAX_WRITES - (1 if implicit is not None else 0)
    writes: dict[int, str] = dict(explicit[-keep:])
    if implicit is not None:
        writes[implicit] = _longer(writes.get(implicit), options.ttl)
    candidates = sorted(set(messages) | {i for i, _ in explicit})
    return Plan(dict(sorted(writes.items())), tuple(candidates[-MAX_CONSIDERED:]))


def apply_breakpoints(
    cache: ProviderCache, key: bytes, model: str, segments: Sequence[Segment], options: CacheOptions
) -> PromptCacheResult:
    """Read the longest live candidate, write the planned breakpoints, count the tokens."""
    ch = chain(segments, key + b"\x00openai-breakpoints\x00" + model.encode("utf-8", "replace"))
    prompt_tokens = estimate_tokens(ch.bytes_at(len(segments)))
    p = plan(segments, options)

    def through(i: int) -> int:
        """Prompt tokens in segments 0..i."""
        return ch.tokens_at(i + 1)

    read = 0
    for i in reversed(p.candidates):
        if through(i) >= MIN_TOKENS and cache.touch(ch.hashes[i]):
            read = through(i)
            break
    written = {"30m": 0, "12h": 0}
    end = read
    for i, ttl in p.writes.items():
        t = through(i)
        if t < MIN_TOKENS:
            continue
        cache.put(ch.hashes[i], TTL_S[ttl])
        if t > end:
            written[ttl] += t - end
            end = t
    return PromptCacheResult(
        prompt_tokens, read, written["30m"] + written["12h"], written["12h"], breakpoints=True
    )
