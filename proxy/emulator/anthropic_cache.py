"""Anthropic's explicit prompt caching: ``cache_control`` breakpoints, minimums, 5m/1h TTLs.

Rules emulated (as Anthropic documents them), one a line:
- tools → system → messages, cut into blocks; a ``cache_control`` block is a breakpoint (a top-level one marks the last block); at most 4.
- a breakpoint caches the exact prefix ending at its block, 5m or 1h (``ttl: "1h"``); a 1h may not follow a 5m.
- a breakpoint reads the prefix cached at its block or one of the 20 boundaries before it; the longest hit wins and refreshes its TTL.
- a prefix under the model's minimum (:mod:`analyzer.cache_rules`) is neither read nor written.
- ``input_tokens`` EXCLUDES cache reads and writes; ``cache_creation`` splits the writes by TTL.
It formats no response; breaking a rule raises :class:`CacheRuleError`. See docs/emulator.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.cache_rules import anthropic_min_tokens
from analyzer.prefix import chain
from analyzer.segments import Segment, segments_for
from analyzer.tokens import estimate_tokens
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.provider_cache import ProviderCache


class CacheRuleError(ValueError):
    """The request breaks a caching rule; Anthropic answers 400 invalid_request_error."""


@dataclass(frozen=True, slots=True)
class AnthropicUsage:
    """Anthropic's usage numbers; ``input_tokens`` counts the uncached prompt tokens only."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_5m: int
    cache_creation_1h: int

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.cache_creation_5m + self.cache_creation_1h

    @property
    def total_prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


def breakpoints(segments: list[Segment], body: dict[str, Any], max_breakpoints: int) -> list[tuple[int, str]]:
    """(segment index, "5m"|"1h") for each breakpoint, in prompt order; rule checks included."""
    points = [(i, seg.cache_control) for i, seg in enumerate(segments) if seg.cache_control]
    auto = body.get("cache_control")
    if isinstance(auto, dict) and segments and (not points or points[-1][0] != len(segments) - 1):
        points.append((len(segments) - 1, "1h" if auto.get("ttl") == "1h" else "5m"))
    if len(points) > max_breakpoints:
        raise CacheRuleError(
            f"A maximum of {max_breakpoints} blocks with cache_control may be provided. Found {len(points)}."
        )
    seen_5m = False
    for _, ttl in points:
        if ttl == "5m":
            seen_5m = True
        elif seen_5m:
            raise CacheRuleError(
                "a cache_control block with ttl='1h' cannot come after one with ttl='5m': "
                "longer TTLs must come first (tools, then system, then messages)"
            )
    return points


def apply_anthropic_cache(
    cache: ProviderCache, config: EmulatorConfig, key: bytes, route: str, body: dict[str, Any]
) -> AnthropicUsage:
    model = body.get("model") if isinstance(body.get("model"), str) else ""
    segments = segments_for("anthropic", route, body)
    points = breakpoints(segments, body, config.max_breakpoints)
    ch = chain(segments, key + b"\x00anthropic\x00" + model.encode("utf-8", "replace"))
    total = estimate_tokens(ch.bytes_at(len(segments)))
    minimum = anthropic_min_tokens(model)

    def tokens_through(i: int) -> int:
        """Prompt tokens in segments 0..i."""
        return ch.tokens_at(i + 1)

    read_at = -1
    for bp, _ in points:
        for i in range(bp, max(-1, bp - config.lookback_blocks - 1), -1):
            if i <= read_at:
                break
            if tokens_through(i) >= minimum and cache.get(ch.hashes[i]) is not None:
                read_at = i
                break
    if read_at >= 0:
        cache.touch(ch.hashes[read_at])
    last_1h = last_any = read_at
    ttl_s = {"5m": config.anthropic_ttl_5m_s, "1h": config.anthropic_ttl_1h_s}
    for bp, ttl in points:
        if tokens_through(bp) < minimum:
            continue
        if bp <= read_at:
            cache.touch(ch.hashes[bp])
            continue
        cache.put(ch.hashes[bp], ttl_s[ttl])
        last_any = bp
        if ttl == "1h":
            last_1h = bp
    read = tokens_through(read_at) if read_at >= 0 else 0
    through_1h = tokens_through(last_1h) if last_1h >= 0 else 0
    through_any = tokens_through(last_any) if last_any >= 0 else 0
    write_1h = max(0, through_1h - read)
    write_5m = max(0, through_any - max(through_1h, read))
    return AnthropicUsage(total - read - write_1h - write_5m, read, write_5m, write_1h)
