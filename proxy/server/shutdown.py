"""Stopping the proxy: a bounded graceful shutdown that always closes the books.

uvicorn's own shutdown waits ``timeout_graceful_shutdown`` for open connections, then
cancels the request tasks; but a second Ctrl-C ("force quit") ends the wait, leaves the
tasks running and skips the app's lifespan shutdown, so the streams in flight were never
recorded as cut and the ledger's last rows were never written. :class:`ProxyServer` is
uvicorn's server with its shutdown replaced by this sequence, whatever signals arrive:

1. stop accepting; idle keep-alive connections close, busy ones close after their response;
2. wait up to ``timeout_graceful_shutdown`` (``--shutdown-timeout``) for the requests in
   flight to finish; a second Ctrl-C ends the wait at once;
3. cancel the rest: the relay records each one as cut (status 503, error
   ``shutdown_cut``; see :mod:`proxy.relay`) and the client's connection is aborted;
   wait for those tasks (at most :data:`CUT_GRACE_S`);
4. the app's lifespan shutdown: upstream pool, store, recorder sinks (the ledger writes
   every row it was handed, then closes).

:func:`serve` runs it as ``uvicorn.run`` would. This module does not handle requests.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import sys

import uvicorn
from uvicorn.config import STARTUP_FAILURE

log = logging.getLogger("prefixgate.shutdown")

CUT_GRACE_S = 5.0  # how long cut requests get to write their records
POLL_S = 0.05


class ProxyServer(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        log.info("shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        await self._drain(self.config.timeout_graceful_shutdown)
        await self._cut()
        for server in self.servers:
            try:
                await asyncio.wait_for(server.wait_closed(), POLL_S * 20)
            except TimeoutError:
                pass
        await self.lifespan.shutdown()

    async def _drain(self, timeout_s: float | None) -> None:
        """Waits for connections and requests to finish; ``None`` waits without limit."""
        state, loop = self.server_state, asyncio.get_running_loop()
        if not (state.connections or state.tasks):
            return
        limit = "without limit" if timeout_s is None else f"up to {timeout_s:g}s"
        log.info("waiting %s for %d request(s) in flight (Ctrl-C again to cut them now)", limit, len(state.tasks))
        deadline = math.inf if timeout_s is None else loop.time() + timeout_s
        while (state.connections or state.tasks) and not self.force_exit and loop.time() < deadline:
            await asyncio.sleep(POLL_S)

    async def _cut(self) -> None:
        tasks = [task for task in self.server_state.tasks if not task.done()]
        if not tasks:
            return
        why = "second Ctrl-C" if self.force_exit else f"--shutdown-timeout {self.config.timeout_graceful_shutdown:g}s"
        log.warning("cutting %d request(s) still in flight (%s)", len(tasks), why)
        for task in tasks:
            task.cancel("shutdown timeout")
        _, pending = await asyncio.wait(tasks, timeout=CUT_GRACE_S)
        if pending:
            log.error("%d cut request(s) did not finish within %.0fs", len(pending), CUT_GRACE_S)


def serve(config: uvicorn.Config) -> None:
    """Runs ``config``'s app until a signal stops it; exits 3 if it never started."""
    server = ProxyServer(config)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it caught, after the shutdown
        pass
    if not server.started:
        sys.exit(STARTUP_FAILURE)
