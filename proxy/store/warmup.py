"""The guarded store's warm-up (:class:`WarmUp`): what the first look-ups would all wait for,
read ahead in the background at start.

The inner store's ``warm()`` (a Cluster's slot map, a connection to each node, the script) runs
as one task under its own deadline (:data:`WARM_DEADLINE_S`), never awaited by the app's start;
a look-up arriving meanwhile waits for it at most :attr:`WarmUp.first_lookup_s`. A failure is
handed to the guard once.

It does not bound, count or skip look-ups (:mod:`proxy.store.guard` does). See docs/store.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

#: the slot map, a connection per node, the script
WARM_DEADLINE_S = 2.0
#: how long a look-up waits for a warm-up in flight before it is skipped (unknown, no failure)
FIRST_LOOKUP_S = 0.5


class WarmUp:
    def __init__(
        self,
        warm: Callable[[], Awaitable[None]] | None,
        lookup_deadline_s: float,
        failed: Callable[[Exception], None],
    ) -> None:
        self._warm = warm
        self._failed = failed
        self.deadline_s = max(lookup_deadline_s, WARM_DEADLINE_S)
        self.first_lookup_s = max(lookup_deadline_s, FIRST_LOOKUP_S)
        self.task: asyncio.Task | None = None

    def start(self) -> asyncio.Task | None:
        """Start it; later calls return the same task. None: nothing to warm, or no running
        loop (the first look-up starts it then)."""
        if self._warm is None or self.task is not None:
            return self.task
        try:
            self.task = asyncio.get_running_loop().create_task(self._run())
        except RuntimeError:
            return None
        return self.task

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    async def _run(self) -> None:
        assert self._warm is not None
        try:
            async with asyncio.timeout(self.deadline_s):
                await self._warm()
        except Exception as exc:
            self._failed(exc)
