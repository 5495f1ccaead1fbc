"""OpenAI GPT-5.6+ prompt caching: entries only at breakpoints, exact matches, billed writes.

Rules emulated (the contract and its assumptions: :mod:`analyzer.cache_rules.openai`):

- The prompt is the request's segments (:mod:`analyzer.segments`: tools → schema →
  [instructions →] one segment per message / input item). A breakpoint sits at the end of a
  segment: the implicit one at the newest message (unless ``mode: "explicit"``), an explicit
  one at each message holding a ``prompt_cache_breakpoint`` part (``Segment.cache_control``
  is its TTL).
- Written: implicit mode, the implicit breakpoint and the latest 3 explicit ones; explicit
  mode, the latest 4 explicit ones; explicit mode without markers: no caching at all (no read
  either). A breakpoint whose prefix is under 1,024 tokens is neither written nor read.
- Read: the candidates are the explicit breakpoints and the end of every message (where an
  earlier turn's implicit breakpoint was); of the latest 80, the longest live one is read,
  exactly at that boundary (no 128-token rounding), and its entry is refreshed.
- Usage: ``cached_tokens`` = the prefix read; ``cache_write_tokens`` = the tokens between it
  and the furthest breakpoint written, each span billed to the TTL of the breakpoint ending it
  (30m / 12h); the rest is plain input. All of it is inside the prompt total.

Assumptions of this emulator (beyond those of :mod:`analyzer.cache_rules.openai`):

- Markers are counted per position: two marked parts of one message are one breakpoint
  (its TTL is the one :mod:`analyzer.segments` records: the longest of the marked parts').
- The implicit breakpoint and a marker on the newest message coincide and use up one of the
  4 writes each (implicit mode still writes the latest 3 markers, one of them there); the
  entry there keeps the longer of the two TTLs.
- An entry lives exactly its TTL from its last write or read (the provider's is a minimum).
- Entries are keyed by (API key, model), like the rules before 5.6; ``prompt_cache_key`` and
  ``prompt_cache_retention`` change nothing here.

This module validates nothing (:mod:`proxy.emulator.openai_options`) and formats no usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from analyzer.cache_rules.openai import MAX_CONSIDERED, MAX_WRITES, MIN_TOKENS, TTL_S
from analyzer.prefix import chain
from analyzer.segments import Segment
from analyzer.tokens import estimate_tokens
from proxy.emulator.openai_cache import PromptCacheResult
from proxy.emulator.openai_options import CacheOptions
from proxy.emulator.provider_cache import ProviderCache


@dataclass(frozen=True, slots=True)
class Plan:
    """Where one request writes and where it may read (segment indexes, prompt order)."""

    writes: dict[int, str]  # segment index -> TTL ("30m" | "12h")
    candidates: tuple[int, ...]  # the latest MAX_CONSIDERED positions looked up, ascending


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


def apply_breakpoints(cache: ProviderCache, key: bytes, model: str, segments: Sequence[Segment],
                      options: CacheOptions) -> PromptCacheResult:
    """Read the longest live candidate, write the planned breakpoints, count the tokens."""
    ch = chain(segments, key + b"\x00openai-breakpoints\x00" + model.encode("utf-8", "replace"))
    prompt_tokens = estimate_tokens(ch.bytes_at(len(segments)))
    p = plan(segments, options)

    def through(i: int) -> int:  # tokens of segments 0..i
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
    return PromptCacheResult(prompt_tokens, read, written["30m"] + written["12h"], written["12h"], breakpoints=True)
