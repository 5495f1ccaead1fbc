"""The engine loop's locked view of its queues: ``busy`` never reports idle while a sequence is between
the scheduler's waiting and running queues, or while an abort is still queued."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("torch")

from kvcache.engine.loop import EngineLoop  # noqa: E402


class HalfMovedScheduler:
    """A scheduler caught mid-admission: the sequence has left ``waiting`` and not reached ``running``."""

    def __init__(self):
        self.waiting, self.running = [], []

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)


def test_busy_waits_for_the_lock_the_scheduler_moves_sequences_under():
    scheduler = HalfMovedScheduler()
    loop = EngineLoop(scheduler, runner=None)
    seen, started = [], threading.Event()
    with loop.lock:  # the loop thread admits under this lock: waiting.popleft() ... running.append(seq)
        scheduler.waiting.clear()
        reader = threading.Thread(target=lambda: (started.set(), seen.append(loop.busy())))
        reader.start()
        started.wait(5)
        reader.join(0.05)
        assert reader.is_alive() and not seen  # it cannot read the half-moved state
        scheduler.running.append("seq")
    reader.join(5)
    assert seen == [True]


def test_a_queued_abort_counts_as_work():
    loop = EngineLoop(HalfMovedScheduler(), runner=None)
    assert not loop.busy()
    loop._aborts.append("seq")
    assert loop.busy()
