"""One log record → the prefix chain analyze walks the tree with: :func:`record_chain`.

A record with a body is cut into segments and hashed (:mod:`analyzer.prefix`): every prefix
size is exact. A ledger row without a body brings its chain's hashes; its prefix sizes are
estimated (:func:`analyzer.logs.reader.ledger_ends`) but for the one the proxy stated.
:func:`record_ttl` is how long the provider keeps such a prefix.

It does not insert into the tree, price or count anything. See docs/analyze.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.cache_rules import ANTHROPIC_TTL_S, OPENAI_56_RULES, provider_ttl_s, rules_for
from analyzer.logs.reader import LogRecord, ledger_ends
from analyzer.prefix import chain, root_hash
from analyzer.segments import Segment, segments_for


@dataclass(slots=True)
class RecordChain:
    root: bytes
    #: the chain's tree keys, one per segment
    keys: list[bytes]
    #: each prefix's size in bytes
    ends: list[int]
    paths: list[str]
    #: the prefixes whose size is exact (all, for a body)
    exact: range
    #: the body's segments; None for a ledger row without a body
    segments: list[Segment] | None


def record_chain(rec: LogRecord) -> RecordChain | None:
    """The record's chain; None when it has none to walk (no body that cuts into segments, no
    ledger chain)."""
    if rec.body is not None:
        segs = segments_for(rec.provider, rec.route, rec.body)
        if not segs:
            return None
        root = root_hash(rec.provider, rec.model)
        ch = chain(segs, root)
        keys = [h[:8] for h in ch.hashes]
        return RecordChain(root, keys, list(ch.ends), [s.path for s in segs], range(len(keys)), segs)
    if not rec.chain_hex:
        return None
    keys = [bytes.fromhex(h) for h in rec.chain_hex]
    stated = 0 < rec.prefix_segments <= len(keys) and rec.prefix_bytes
    return RecordChain(
        root_hash(rec.provider, rec.model),
        keys,
        ledger_ends(len(keys), rec.total_bytes or 0, rec.prefix_segments, rec.prefix_bytes),
        [f"segment[{i}]" for i in range(len(keys))],
        range(rec.prefix_segments - 1, rec.prefix_segments) if stated else range(0),
        None,
    )


def record_ttl(
    rec: LogRecord, segs: Sequence[Segment] | None, ttl_openai: float, ttl_anthropic: float
) -> float:
    """How long a prefix of this request counts as cached: the configured TTL, Anthropic's 1-hour
    cache when the request asked for it, and for GPT-5.6+ 30 minutes at least, 12 h on request."""
    ttl = ttl_anthropic if rec.provider == "anthropic" else ttl_openai
    if segs is not None and any(s.cache_control == "1h" for s in segs):
        ttl = max(ttl, ANTHROPIC_TTL_S["1h"])
    if rules_for(rec.provider, rec.model) is OPENAI_56_RULES:
        ttl = max(ttl, provider_ttl_s(rec.provider, segs or (), rec.model))
    return ttl
