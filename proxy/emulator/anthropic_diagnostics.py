"""Anthropic cache diagnostics: ``diagnostics: {"previous_message_id": "msg_…"}`` in a request
gets ``diagnostics: {"cache_miss_reason": {...}}`` (or ``null``) in the Message.

An opted-in request is remembered per API key (bounded LRU) by its answer's id: a fingerprint
of its prompt and the tokens of its longest cached prefix. A later request naming that id is
compared, first difference wins: ``previous_message_not_found``, ``model_changed``,
``tools_changed``, ``system_changed``, ``messages_changed`` (with ``cache_missed_input_tokens``),
``unavailable``, else ``null``. Without ``diagnostics`` the Message has no such key.
The SDK types name the reasons, not the algorithm: :data:`ASSUMPTIONS`.
It applies no caching rule and formats no Message. See docs/emulator.md.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from analyzer.jsonpath import JsonPath
from analyzer.segments import Segment
from proxy.emulator.anthropic_cache import CacheRuleError

ASSUMPTIONS = """Assumptions (the SDK types name the reasons, not the algorithm), one a line:
- Only opted-in requests are remembered (the docs: pass ``null`` on the first turn "to opt in").
- ``diagnostics: null`` counts as absent (no key in the answer).
- Prompts are compared by canonical segments (:mod:`analyzer.segments`): moving a ``cache_control`` marker or spelling a string as one text block changes nothing.
- ``cache_missed_input_tokens`` is the previous request's longest cached prefix (reads plus writes on the prompt as sent); it may be 0, the reason reported all the same.
"""

#: Parameters that affect the prompt but are not part of the cached prefix's parts.
OTHER_PARAMS = ("thinking", "tool_choice")


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """One remembered request: its parts' digests, ``params`` (thinking and tool_choice,
    canonical) and ``cached_tokens``, the longest prefix it left cached."""

    model: tuple[Any, Any]
    tools: tuple[bytes, ...]
    system: tuple[bytes, ...]
    messages: tuple[bytes, ...]
    params: bytes
    cached_tokens: int


def _digest(parts: Sequence[bytes]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(len(p).to_bytes(8, "little") + p)
    return h.digest()


def fingerprint(body: dict[str, Any], segments: Sequence[Segment], cached_tokens: int) -> Fingerprint:
    n_messages = len(body["messages"]) if isinstance(body.get("messages"), list) else 0
    per_message: list[list[bytes]] = [[] for _ in range(n_messages)]
    for s in segments:
        if s.kind == "message":
            index = JsonPath.parse(s.path)[1]
            if isinstance(index, int) and index < n_messages:
                per_message[index].append(s.data)
    return Fingerprint(
        (body.get("model"), body.get("speed")),
        tuple(_digest([s.data]) for s in segments if s.kind == "tool"),
        tuple(_digest([s.data]) for s in segments if s.kind == "system"),
        tuple(_digest(parts) for parts in per_message),
        orjson.dumps([body.get(k) for k in OTHER_PARAMS], option=orjson.OPT_SORT_KEYS),
        cached_tokens,
    )


def requested(body: dict[str, Any]) -> tuple[bool, str | None]:
    """(whether the request opted in, the previous message id it names); 400 on a bad shape."""
    value = body.get("diagnostics")
    if value is None:
        return False, None
    if not isinstance(value, dict):
        raise CacheRuleError("diagnostics: Input should be a valid dictionary")
    previous = value.get("previous_message_id")
    if previous is not None and not isinstance(previous, str):
        raise CacheRuleError("diagnostics.previous_message_id: Input should be a valid string")
    return True, previous


def diagnose(previous: Fingerprint | None, current: Fingerprint) -> dict[str, Any] | None:
    """The ``cache_miss_reason`` of ``current`` against ``previous`` (None: no divergence)."""
    if previous is None:
        return {"type": "previous_message_not_found"}
    missed = {"cache_missed_input_tokens": previous.cached_tokens}
    if previous.model != current.model:
        return {"type": "model_changed", **missed}
    if previous.tools != current.tools:
        return {"type": "tools_changed", **missed}
    if previous.system != current.system:
        return {"type": "system_changed", **missed}
    if current.messages[: len(previous.messages)] != previous.messages:
        return {"type": "messages_changed", **missed}
    if previous.params != current.params:
        return {"type": "unavailable"}
    return None


class MessageMemory:
    """Fingerprints of opted-in requests by (API key digest, message id): a bounded LRU."""

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[bytes, str], Fingerprint] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes, message_id: str) -> Fingerprint | None:
        found = self._entries.get((key, message_id))
        if found is not None:
            self._entries.move_to_end((key, message_id))
        return found

    def put(self, key: bytes, message_id: str, fp: Fingerprint) -> None:
        self._entries[(key, message_id)] = fp
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


def diagnostics(
    memory: MessageMemory, key: bytes, previous_id: str | None, current: Fingerprint
) -> dict[str, Any] | None:
    """The Message's ``diagnostics`` value for an opted-in request."""
    if previous_id is None:
        return None
    reason = diagnose(memory.get(key, previous_id), current)
    return None if reason is None else {"cache_miss_reason": reason}
