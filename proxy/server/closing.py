"""The app's close at shutdown, within a budget: the books always close.

:func:`close_gate` is what the app's lifespan runs at shutdown (:func:`proxy.app.create_app`):
:meth:`proxy.gate.Gate.aclose` (the Gemini auto-cache, the upstream pool, the prefix store,
then the recorder's sinks, the ledger among them), given :data:`PARTS_S` in all. Past it (a
part waiting on a dependency that hangs; the gate gives each part 8 s of its own, far more
than a stop may take) it logs one warning naming where the close was stuck, cuts the
auto-cache's background calls still running (each records itself as cut, before the books
close), and closes the ledger itself within :data:`BOOKS_S`, so every row handed to it is
written. The close it went on without keeps running beside the rest of the shutdown (its
dependency may still answer) and ends with the process; an error it raises later is logged,
never raised.

Budgets: :data:`PARTS_S` + :data:`CUT_S` + :data:`BOOKS_S` is what the server gives the app's
shutdown (:data:`proxy.server.shutdown.LIFESPAN_S`). This module closes nothing else.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from proxy.server.stacks import task_stack

if TYPE_CHECKING:
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.shutdown")

PARTS_S = 0.8  # the gate's whole close (a healthy one takes milliseconds)
CUT_S = 0.1  # the auto-cache's background calls, cut, to record themselves
BOOKS_S = 0.5  # the ledger's last rows, when the gate's close was left behind


async def close_gate(gate: Gate, parts_s: float = PARTS_S, books_s: float = BOOKS_S) -> None:
    """Close ``gate`` within about ``parts_s + CUT_S + books_s``; raises what the gate's close
    raised when it finished in time (after the books closed, as the gate does)."""
    closing = asyncio.ensure_future(gate.aclose())
    done, _ = await asyncio.wait({closing}, timeout=parts_s)
    if closing in done:
        closing.result()
        return
    me = asyncio.current_task()
    parts = [
        stack for t in asyncio.all_tasks() if t not in (closing, me) and " aclose" in (stack := task_stack(t))
    ]  # the gate's own
    log.warning(
        "shutdown: closing the app took over %.1f s; closing the books without it (stuck in: %s%s)",
        parts_s,
        task_stack(closing),
        "".join(f"; {stack}" for stack in parts),
    )
    closing.add_done_callback(_said)
    calls = (
        gate.gemini_auto_cache.cut()
    )  # its background calls still running, cancelled: each records itself as cut
    if calls:
        await asyncio.wait(calls, timeout=CUT_S)
    ledger = gate.money.ledger if gate.money is not None else None
    if ledger is not None:
        await ledger.aclose(books_s)


def _said(task: asyncio.Task) -> None:
    """The close left behind ended: its error is logged (a warning: the process is ending)."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.warning("shutdown: the app's close left behind failed (%s: %s)", type(exc).__name__, exc)
