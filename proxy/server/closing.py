"""The app's close at shutdown, within a budget: the books always close (:func:`close_gate`).

The app's lifespan runs it: :meth:`proxy.gate.Gate.aclose`, given :data:`PARTS_S` in all. Past
it, one warning names where the close was stuck, the Gemini auto-cache's background calls are
cut (each records itself as cut) and the ledger is closed directly within :data:`BOOKS_S`. The
close it went on without keeps running and ends with the process (a later error is logged).
:data:`PARTS_S` + :data:`CUT_S` + :data:`BOOKS_S` is :data:`proxy.server.shutdown.LIFESPAN_S`.

It closes nothing else. See docs/shutdown.md.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from proxy.server.stacks import task_stack

if TYPE_CHECKING:
    from proxy.gate import Gate

log = logging.getLogger("prefixgate.shutdown")

#: the gate's whole close (a healthy one takes milliseconds)
PARTS_S = 0.8
#: the auto-cache's background calls, cut, to record themselves
CUT_S = 0.1
#: the ledger's last rows, when the gate's close was left behind
BOOKS_S = 0.5


async def close_gate(gate: Gate, parts_s: float = PARTS_S, books_s: float = BOOKS_S) -> None:
    """Close ``gate`` within about ``parts_s + CUT_S + books_s``; raises what the gate's close
    raised when it finished in time (after the books closed, as the gate does)."""
    closing = asyncio.ensure_future(gate.aclose())
    done, _ = await asyncio.wait({closing}, timeout=parts_s)
    if closing in done:
        closing.result()
        return
    me = asyncio.current_task()
    gate_parts = [
        stack for t in asyncio.all_tasks() if t not in (closing, me) and " aclose" in (stack := task_stack(t))
    ]
    log.warning(
        "shutdown: closing the app took over %.1f s; closing the books without it (stuck in: %s%s)",
        parts_s,
        task_stack(closing),
        "".join(f"; {stack}" for stack in gate_parts),
    )
    closing.add_done_callback(_said)
    calls = gate.gemini_auto_cache.cut()
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
