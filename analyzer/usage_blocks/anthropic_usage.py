"""Anthropic's usage blocks → :class:`~analyzer.usage_blocks.counts.Usage`: Messages, and a
stream's ``message_start`` + ``message_delta``.

``input_tokens`` excludes cache reads and writes, so they are added; writes split by TTL in
``cache_creation`` (5 minutes, 1 hour); the ``compaction`` passes in ``iterations`` are billed
apart from the top-level fields, so they are added too. An entry of another type is drift.

It prices nothing. See docs/money.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.usage_blocks.block_reader import BlockReader, note_key
from analyzer.usage_blocks.counts import Usage

CACHE_KEYS = frozenset({"cache_creation_input_tokens", "cache_read_input_tokens", "cache_creation"})
CREATION_KEYS = frozenset({"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"})
#: already counted in the top-level fields
ITERATIONS_IN_TOP_LEVEL = frozenset({"message"})
#: billed, but not in the top-level fields
ITERATIONS_BILLED_APART = frozenset({"compaction"})


def _counts(n: BlockReader, u: Mapping[str, Any], where: str = "") -> tuple[int, int, int, int, int]:
    """(plain input, cache read, cache write, of which 1h, output) of one Anthropic usage block.
    Every key of ``cache_creation`` not known is drift: a new TTL."""
    plain = n(u, "input_tokens")
    read = n(u, "cache_read_input_tokens")
    write = n(u, "cache_creation_input_tokens")
    write_1h = 0
    n.unknown_cache_fields(u, CACHE_KEYS, where)
    creation = u.get("cache_creation")
    if isinstance(creation, Mapping):
        n.unknown_cache_fields(creation, CREATION_KEYS, where + "cache_creation.", every_key=True)
        write_1h = n(creation, "ephemeral_1h_input_tokens")
        write = max(write, write_1h + n(creation, "ephemeral_5m_input_tokens"))
    return plain, read, write, min(write_1h, write), n(u, "output_tokens")


def compaction_entries(iterations: Any) -> list[Mapping[str, Any]]:
    """The ``compaction`` entries of an ``iterations`` list (nothing for any other shape)."""
    if not isinstance(iterations, list):
        return []
    return [e for e in iterations if isinstance(e, Mapping) and e.get("type") in ITERATIONS_BILLED_APART]


def _iterations_drift(iterations: Any) -> list[str]:
    """The drift notes of an ``iterations`` block: not a list, or entries of a type not understood."""
    if iterations is None:
        return []
    if not isinstance(iterations, list):
        return ["iterations:unknown_shape"]
    notes = []
    for i, entry in enumerate(iterations):
        kind = entry.get("type") if isinstance(entry, Mapping) else None
        if kind not in ITERATIONS_IN_TOP_LEVEL and kind not in ITERATIONS_BILLED_APART:
            notes.append(f"iterations[{note_key(kind) if isinstance(kind, str) else i}]:unknown_type")
    return notes


def from_anthropic(u: Mapping[str, Any], extra_iterations: Any = None) -> Usage:
    """Messages API usage: ``input_tokens`` excludes cache reads and writes, so they are added;
    the ``compaction`` passes in ``iterations`` (or ``extra_iterations``, a stream's
    ``message_start`` ones) are added to the totals."""
    n = BlockReader()
    plain, read, write, write_1h, output = _counts(n, u)
    iterations = u.get("iterations")
    n.drift.extend(_iterations_drift(iterations))
    for entry in compaction_entries(iterations if extra_iterations is None else extra_iterations):
        p, r, w, w1h, o = _counts(n, entry, "iterations.")
        plain, read, write, write_1h, output = plain + p, read + r, write + w, write_1h + w1h, output + o
    return n.usage(
        input_tokens=plain + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=min(write_1h, write),
        output_tokens=output,
    )


def merge_anthropic_stream(start: Mapping[str, Any] | None, delta: Mapping[str, Any] | None) -> Usage:
    """Anthropic streams split usage: ``message_start`` has input and cache numbers (and, with
    compaction, the compaction pass in its ``iterations``), ``message_delta`` the (cumulative)
    output count and, in newer API versions, may repeat the input numbers (and carries only the
    final message's iterations). Later values win field by field; the compaction passes are
    the delta's when it lists any, else the start's, counted once; the start's ``iterations``
    are checked for drift even where the delta's replace them."""
    merged: dict[str, Any] = dict(start or {})
    for key, value in (delta or {}).items():
        if value is not None:
            merged[key] = value
    passes = compaction_entries((delta or {}).get("iterations")) or compaction_entries(
        (start or {}).get("iterations")
    )
    usage = from_anthropic(merged, extra_iterations=passes)
    started = (start or {}).get("iterations")
    if started is not merged.get("iterations"):
        # the delta's replaced them: what the start's held is drift still
        usage.drift = tuple(dict.fromkeys((*usage.drift, *_iterations_drift(started))))
    return usage
