"""Where a stop is stuck, in one line per task or thread: for the shutdown's warnings.

A thread dump of a process whose stop hangs shows the event loop idle (the main thread sits in
``asyncio.run``): what it waits for is an ``await`` chain, visible only from the task. So the
shutdown names the task's chain (:func:`task_stack`: ``file:line function`` from the task's
coroutine to the innermost ``await``), and the watchdog, which runs beside a loop that may be
blocked, names every thread's stack and every pending task's chain (:func:`everywhere`).

This module only describes; it changes nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
import traceback
from types import FrameType

#: per task or thread, innermost last
MAX_FRAMES = 12


_LIBRARY = re.compile(r"^.*/(site-packages|lib/python\d+\.\d+)/")
_PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _where(frame: FrameType, lineno: int | None = None) -> str:
    path = frame.f_code.co_filename
    if path.startswith(_PROJECT_ROOT):
        path = path[len(_PROJECT_ROOT) :]
    else:
        path = _LIBRARY.sub("", path)
    return f"{path}:{frame.f_lineno if lineno is None else lineno} {frame.f_code.co_name}"


def task_stack(task: asyncio.Task) -> str:
    """``task``'s await chain, outermost first, down to what the innermost coroutine awaits
    (``Task.get_stack`` gives only the outermost frame of a suspended task); ``?`` when
    there is none (done, or not started)."""
    out = []
    awaited = task.get_coro()
    try:
        while awaited is not None and len(out) < MAX_FRAMES:
            frame = next(
                (
                    f
                    for f in (getattr(awaited, a, None) for a in ("cr_frame", "gi_frame", "ag_frame"))
                    if f is not None
                ),
                None,
            )
            if frame is None:
                # a future: a task, an event, a socket read...
                out.append(f"<{type(awaited).__name__}>")
                break
            out.append(_where(frame))
            awaited = next(
                (
                    w
                    for w in (getattr(awaited, a, None) for a in ("cr_await", "gi_yieldfrom", "ag_await"))
                    if w is not None
                ),
                None,
            )
    except Exception:
        # torn down meanwhile
        pass
    return " > ".join(out) or "?"


def thread_stack(frame: FrameType) -> str:
    """A thread's stack from its current ``frame``, outermost first, the last frames only."""
    entries = traceback.walk_stack(frame)
    frames = [(f, lineno) for f, lineno in entries][:MAX_FRAMES]
    return " > ".join(_where(f, lineno) for f, lineno in reversed(frames))


def everywhere(loop: asyncio.AbstractEventLoop | None) -> str:
    """Every other thread's stack and every pending task of ``loop``, one per line. Safe to
    call from a thread other than the loop's (best effort: the task set may change meanwhile)."""
    lines = []
    frames = sys._current_frames()
    me = threading.get_ident()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.ident != me else None
        if frame is not None:
            lines.append(f"thread {thread.name}: {thread_stack(frame)}")
    if loop is not None:
        try:
            # all_tasks retries itself while the loop changes the set
            tasks = list(asyncio.all_tasks(loop))
        except Exception:
            tasks = []
        for task in tasks:
            lines.append(f"task {task.get_name()}: {task_stack(task)}")
    return "\n  " + "\n  ".join(lines) if lines else " ?"
