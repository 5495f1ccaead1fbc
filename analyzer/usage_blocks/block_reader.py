"""Reading the numbers of one usage block, the one place they are sanitised: :class:`BlockReader`.

A count that is not a number, negative, not an integer or over :data:`~.counts.MAX_TOKENS` is
changed (0, or capped) and named in the usage's ``flags``; a field that names a cache but is
unknown, or a cached count above the prompt, is named in its ``drift``. :func:`note_key` keeps
an upstream's key fit for a note.

It knows no provider's field names (the provider readers pass them). See docs/money.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from analyzer.usage_blocks.counts import MAX_TOKENS, Usage

#: characters of an upstream's key kept in a drift note
MAX_NOTE_KEY = 80


def note_key(key: str) -> str:
    """An upstream's key as a drift note names it: no ``,`` (notes are comma-joined in the
    ledger, so one would read back as two) and at most :data:`MAX_NOTE_KEY` characters."""
    key = key.replace(",", ";")
    return key if len(key) <= MAX_NOTE_KEY else key[:MAX_NOTE_KEY] + "…"


class BlockReader:
    """Reads the token counts of one usage block (``reader(block, key)``), noting each value it
    had to change."""

    __slots__ = ("flags", "drift")

    def __init__(self) -> None:
        self.flags: list[str] = []
        self.drift: list[str] = []

    def unknown_cache_fields(
        self, block: Any, known: frozenset[str], where: str = "", *, every_key: bool = False
    ) -> None:
        """Drift for every key of ``block`` that names a cache but is not in ``known`` (with
        ``every_key``, every key not in ``known``: inside a block that is all cache counts)."""
        if isinstance(block, Mapping):
            for key in block:
                if isinstance(key, str) and (every_key or "cache" in key.lower()) and key not in known:
                    self.drift.append(f"{where}{note_key(key)}:unknown_field")

    def above(self, name: str, value: int, prompt: int) -> int:
        """``value`` capped at ``prompt``, with a drift note when it was above it."""
        if value > prompt:
            self.drift.append(f"{name}:above_prompt")
            return prompt
        return value

    def __call__(self, block: Any, key: str) -> int:
        if not isinstance(block, Mapping):
            return 0
        value = block.get(key)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self._flag(key, "not_a_number", 0)
        if isinstance(value, float):
            if not math.isfinite(value):
                return self._flag(key, "not_a_number", 0)
            if value < 0:
                return self._flag(key, "negative", 0)
            if value > MAX_TOKENS:
                return self._flag(key, "too_large", MAX_TOKENS)
            if not value.is_integer():
                return self._flag(key, "not_an_integer", int(value))
            return int(value)
        if value < 0:
            return self._flag(key, "negative", 0)
        if value > MAX_TOKENS:
            return self._flag(key, "too_large", MAX_TOKENS)
        return int(value)

    def _flag(self, key: str, why: str, value: int) -> int:
        self.flags.append(f"usage.{key}:{why}")
        return value

    def usage(self, **counts: int) -> Usage:
        """The :class:`Usage`, with sums capped at :data:`MAX_TOKENS` and the flags attached."""
        for name, value in counts.items():
            if value > MAX_TOKENS:
                counts[name] = self._flag(name, "too_large", MAX_TOKENS)
        return Usage(**counts, flags=tuple(dict.fromkeys(self.flags)), drift=tuple(dict.fromkeys(self.drift)))
