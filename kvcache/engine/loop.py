"""The engine's loop thread: schedule a step, run it, deliver its tokens, repeat while there is work.

Everything that changes the queues happens under one lock (``add``, ``abort``, and the loop's schedule
and bookkeeping); the forward pass runs outside it, so requests arrive and leave while the model computes.
After a step each sampled token is checked against the request's stop tokens (a stop token ends it and is
not delivered) and its token budget; a sequence that ends has its blocks freed *before* its listener hears
the end, so a client that sees its response complete finds the pool already whole. Aborts queued during a
step are applied before the next one. A step that raises fails only the sequences in it (each gets the
exception as ``error``; blocks published for the step are forgotten); the loop carries on. Listeners are
called outside the lock and must not block. This module does not know about HTTP or tokenizers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kvcache.engine.model_runner import ModelRunner
from kvcache.engine.scheduler import Scheduler
from kvcache.engine.sequence import Sequence

Observer = Callable[
    [Sequence, float, float | None], None
]  # (sequence, now, gap since its last token or None)


class EngineLoop:
    def __init__(self, scheduler: Scheduler, runner: ModelRunner):
        self.scheduler, self.runner = scheduler, runner
        self.lock = threading.Lock()
        self._wake = threading.Condition(self.lock)
        self._aborts: list[Sequence] = []
        self._thread: threading.Thread | None = None
        self._closing = False
        self.steps = 0
        self.observers: list[Observer] = []  # token timing hooks (metrics)

    def add(self, seq: Sequence) -> None:
        with self._wake:
            if self._closing:
                raise RuntimeError("the engine is shut down")
            self.scheduler.add(seq)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kvcache-engine", daemon=True)
                self._thread.start()
            self._wake.notify()

    def busy(self) -> bool:
        """Whether any request is queued, running or waiting to be aborted, read under the lock (the
        scheduler moves a sequence from waiting to running in two steps, so an unlocked look can miss it)."""
        with self._wake:
            return bool(self._aborts) or self.scheduler.has_work()

    def abort(self, seq: Sequence) -> None:
        with self._wake:
            if not seq.finished:
                self._aborts.append(seq)
                self._wake.notify()

    def close(self, timeout: float = 10.0) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not (self._closing or self._aborts or self.scheduler.has_work()):
                    self._wake.wait()
                if self._closing:
                    ended = self._end(list(self.scheduler.running) + list(self.scheduler.waiting), "abort")
                    break
                ended = self._end(self._aborts, "abort")
                self._aborts = []
                try:
                    chunks = self.scheduler.schedule()
                except Exception as exc:  # noqa: BLE001 (a bug here must not strand every request)
                    waiting = list(self.scheduler.running) + list(self.scheduler.waiting)
                    for seq in waiting:
                        seq.error = exc
                    ended += self._end(waiting, "error")
                    chunks = []
            self._notify([], ended)
            if not chunks:
                time.sleep(0.001)  # nothing fits yet (cannot last: the pool holds a context)
                continue
            started = time.perf_counter()
            try:
                sampled = self.runner.step(chunks)
            except Exception as exc:  # noqa: BLE001 (handed to each request of the step)
                with self._wake:
                    self.scheduler.allocator.forget_step()
                    for chunk in chunks:
                        chunk.seq.error = exc
                    ended = self._end([c.seq for c in chunks], "error")
                self._notify([], ended)
                continue
            self.steps += 1
            prompt = [c.count for c in chunks if c.count > 1]
            self.scheduler.pacer.record(time.perf_counter() - started, len(chunks) - len(prompt), sum(prompt))
            with self._wake:
                delivered, ended = self._postprocess(sampled)
            self._notify(delivered, ended)
        self._notify([], ended)

    def _end(self, seqs: list[Sequence], reason: str) -> list[Sequence]:
        ended = []
        for seq in seqs:
            if not seq.finished:
                self.scheduler.finish(seq, reason)
                ended.append(seq)
        return ended

    def _postprocess(
        self, sampled: list[tuple[Sequence, int]]
    ) -> tuple[list[tuple[Sequence, int]], list[Sequence]]:
        now = time.perf_counter()
        delivered, ended = [], []
        for seq, token in sampled:
            if seq.finished:
                continue
            if token in seq.params.stop_token_ids:
                ended += self._end([seq], "stop")
                continue
            gap = None if seq.last_token_at is None else now - seq.last_token_at
            seq.token_ids.append(token)
            seq.first_token_at = seq.first_token_at or now
            seq.last_token_at = now
            for observe in self.observers:
                observe(seq, now, gap)
            delivered.append((seq, token))
            if seq.num_new_tokens >= seq.max_new_tokens:
                ended += self._end([seq], "length")
        return delivered, ended

    @staticmethod
    def _notify(delivered: list[tuple[Sequence, int]], ended: list[Sequence]) -> None:
        for seq, token in delivered:
            _call(seq, token)
        for seq in ended:
            _call(seq, None)


def _call(seq: Sequence, item: int | None) -> None:
    if seq.listener is not None:
        try:
            seq.listener(item)
        except Exception:  # noqa: BLE001 (a listener whose consumer is gone must not stop the loop)
            pass
