"""The heads of the apps each proxy saw, shared between proxies, best effort, never awaited by a pick.

Each proxy publishes the heads it saw lately (each with its last sighting) to a :class:`HeadBoard`
and reads everyone's in a background loop (every ``interval_s``, each call bounded by
``timeout_s``), merging them into its :class:`~.head_assign.HeadWindow`; a pick reads only the
window, so a hung or dead board never delays a request (the set is then this proxy's own).
:class:`MemoryHeadBoard` serves proxies in one process (tests); the Redis one is :mod:`.redis_board`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from proxy.replicas.head_assign import HeadWindow
from proxy.replicas.periodic import Periodic

log = logging.getLogger("prefixgate.replicas")


class HeadBoard(Protocol):
    async def publish_heads(self, heads: Mapping[bytes, float], window_s: float) -> None:
        """This proxy's heads, each with its last sighting (unix seconds), kept ``window_s``."""

    async def read_heads(self, window_s: float) -> set[bytes]:
        """Every proxy's heads seen in the last ``window_s``."""


class MemoryHeadBoard:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._heads: dict[bytes, float] = {}

    async def publish_heads(self, heads: Mapping[bytes, float], window_s: float) -> None:
        for head, at in heads.items():
            self._heads[head] = max(at, self._heads.get(head, at))

    async def read_heads(self, window_s: float) -> set[bytes]:
        since = self._clock() - window_s
        return {h for h, at in self._heads.items() if at >= since}


class SharedHeads(Periodic):
    def __init__(
        self, board: HeadBoard, window: HeadWindow, *, interval_s: float = 1.0, timeout_s: float = 0.25
    ) -> None:
        if min(interval_s, timeout_s) <= 0:
            raise ValueError("interval_s and timeout_s must be positive")
        self.board, self.window = board, window
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self.failures = 0  # refreshes that failed or missed their deadline

    async def refresh(self) -> bool:
        """Publish ours, read everyone's, each bounded by ``timeout_s``; True when both answered."""
        window = self.window
        try:
            async with asyncio.timeout(self.timeout_s):
                await self.board.publish_heads(dict(window.local()), window.window_s)
            async with asyncio.timeout(self.timeout_s):
                heads = await self.board.read_heads(window.window_s)
        except Exception as exc:  # TimeoutError included: advice only, the next refresh tries again
            self.failures += 1
            log.debug("shared heads refresh failed: %s", type(exc).__name__)
            return False
        window.merge(heads)
        return True

    async def tick(self) -> bool:
        return await self.refresh()

    def period_s(self) -> float:
        return self.interval_s
