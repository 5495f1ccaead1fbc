"""One background loop for the replicas' periodic work (health checks, shared load and heads).

:class:`Periodic` runs ``tick()`` every ``period_s()`` seconds from :meth:`start` until
:meth:`aclose`; a tick that raises is logged and counted, and the loop goes on (one bad round
never stops the checks for good). It does not bound a tick's time: each tick bounds its own calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

log = logging.getLogger("prefixgate.replicas")


class Periodic:
    _task: asyncio.Task | None = None
    tick_errors = 0

    async def tick(self) -> object:
        raise NotImplementedError

    def period_s(self) -> float:
        raise NotImplementedError

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                self.tick_errors += 1
                log.warning("%s round failed", type(self).__name__, exc_info=True)
            await asyncio.sleep(self.period_s())

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
