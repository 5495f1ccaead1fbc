"""The routing key of a request: the hash of the prefix its replica is chosen by.

The key is an entry of the request's chain (:mod:`analyzer.prefix`, rooted at upstream and
model): the hash through the **head** (the leading tools, schemas, system / developer text),
the part every request of an app repeats. When that head is shorter than ``min_head_tokens``
(no engine keeps much of value in it), the key runs on through the **first conversation
segment**, the chat's own head, which every later turn of that chat repeats: each chat stays
on one replica and chats spread. Without a chain there is no key. Why: docs/several-engines.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.prefix import Chain, chain, root_hash
from analyzer.segments import Segment, segments_for

MIN_HEAD_TOKENS = 1024  # below this a provider would not cache the head alone (OpenAI's minimum)


def head_length(segments: Sequence[Segment]) -> int:
    """How many leading segments belong to the stable head."""
    n = 0
    for seg in segments:
        if not seg.in_head:
            break
        n += 1
    return n


def key_length(segments: Sequence[Segment], chain: Chain, min_head_tokens: int = MIN_HEAD_TOKENS) -> int:
    """How many leading segments the routing key covers (0: no key)."""
    return _cut(segments, chain, min_head_tokens)[0]


def _cut(segments: Sequence[Segment], chain: Chain, min_head_tokens: int) -> tuple[int, bool]:
    """(segments the key covers, whether they are an app-sized head)."""
    n = min(len(segments), len(chain))
    head = head_length(segments[:n])
    if head and chain.tokens_at(head) >= min_head_tokens:
        return head, True
    return min(head + 1, n), False


def route_of(
    segments: Sequence[Segment], chain: Chain | None, min_head_tokens: int = MIN_HEAD_TOKENS
) -> tuple[bytes | None, bool]:
    """(the chain hash a request is routed by, whether it is an app's head of at least
    ``min_head_tokens``: those are placed by :mod:`.head_assign`); (None, False) without a chain."""
    if chain is None or not len(chain):
        return None, False
    n, is_head = _cut(segments, chain, min_head_tokens)
    return (chain.hashes[n - 1], is_head) if n else (None, False)


def routing_key(
    segments: Sequence[Segment], chain: Chain | None, min_head_tokens: int = MIN_HEAD_TOKENS
) -> bytes | None:
    """The chain hash a request is routed by; None when the request has no chain (no key)."""
    return route_of(segments, chain, min_head_tokens)[0]


def body_route(
    provider: str, route: str, body: Any, upstream: str, min_head_tokens: int = MIN_HEAD_TOKENS
) -> tuple[bytes | None, bool]:
    """:func:`route_of` a request body as the proxy would cut and hash it (for clients and
    benchmarks that route without the proxy; the proxy itself passes the analysis it has)."""
    segments = segments_for(provider, route, body)
    model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else ""
    hashed = chain(segments, root_hash(upstream, model)) if segments else None
    return route_of(segments, hashed, min_head_tokens)


def body_key(
    provider: str, route: str, body: Any, upstream: str, min_head_tokens: int = MIN_HEAD_TOKENS
) -> bytes | None:
    """The key of a request body (:func:`body_route` without the head flag)."""
    return body_route(provider, route, body, upstream, min_head_tokens)[0]
