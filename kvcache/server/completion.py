"""One HTTP request's generation, as the server's event loop sees it: tokens in, text pieces out.

``Completion`` tokenizes the request (chat template, text, or token ids), submits it to the engine, and
turns the token ids the engine loop delivers (into an asyncio queue per request, through one ``Inbox`` per
event loop: the engine thread appends and wakes the event loop once for all the tokens it hands over
together, one engine step's for every stream, not once per token; the event loop never blocks on the
model) into text pieces, holding back text that may start a
stop string. A stop string ends the request at once (``abort``: its blocks are freed at the next step);
so does leaving the iteration early (a client that disconnected, a cancelled task). ``wait_disconnect``
resolves when the client hangs up. It does not format responses (``protocol``, ``responses``).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator

from starlette.requests import Request

from kvcache.engine.engine import Engine
from kvcache.engine.sequence import Sequence
from kvcache.params import GenerationParams, SamplingParams
from kvcache.server.protocol import RequestError
from kvcache.server.stops import StopMatcher
from kvcache.utils.tokenizer import StreamDecoder


class Inbox:
    """Token ids from the engine thread for one event loop's queues: ``put`` from any thread; the first
    ``put`` after a drain schedules one drain on the loop (``call_soon_threadsafe``: one wake-up), which
    hands every item over in arrival order (each queue sees its tokens in order)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._items: list[tuple[asyncio.Queue, int | None]] = []
        self._lock = threading.Lock()

    def put(self, queue: asyncio.Queue, item: int | None) -> None:
        with self._lock:
            self._items.append((queue, item))
            if len(self._items) > 1:
                return  # a drain is already scheduled and will take this one too
        self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            items, self._items = self._items, []
        for queue, item in items:
            queue.put_nowait(item)


_inboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Inbox] = weakref.WeakKeyDictionary()


def inbox(loop: asyncio.AbstractEventLoop) -> Inbox:
    """The event loop's ``Inbox`` (made on first use, on the loop's own thread)."""
    box = _inboxes.get(loop)
    if box is None:
        box = _inboxes[loop] = Inbox(loop)
    return box


def prompt_of(
    engine: Engine, messages: list[dict] | None, prompt: str | None, prompt_ids: list[int] | None
) -> list[int]:
    """The request's prompt as token ids (runs the chat template; call it off the event loop)."""
    tok = engine.tokenizer
    if messages is not None:
        return tok.encode_chat(messages)
    if prompt_ids is not None:
        vocab = engine.model.config.vocab_size
        if any(not 0 <= t < vocab for t in prompt_ids):
            raise RequestError(f"prompt token ids must be in [0, {vocab})", "prompt")
        return prompt_ids
    return tok.encode(prompt or "")


class Completion:
    def __init__(
        self,
        engine: Engine,
        prompt_ids: list[int],
        max_tokens: int | None,
        sampling: SamplingParams,
        stops: list[str],
        ignore_eos: bool = False,
    ):
        self.engine = engine
        max_new = engine.check(prompt_ids, max_tokens)
        stop_ids = frozenset() if ignore_eos else engine.stop_ids
        self.params = GenerationParams(max_new_tokens=max_new, sampling=sampling, stop_token_ids=stop_ids)
        self.prompt_ids = prompt_ids
        self.decoder = StreamDecoder(engine.tokenizer)
        self.stops = StopMatcher(stops)
        self.finish_reason = "length"
        self.seq: Sequence | None = None
        self.completion_tokens = 0  # tokens this request consumed (up to a stop string, not past it)

    async def pieces(self) -> AsyncIterator[str]:
        """Text pieces as tokens arrive; raises the engine's exception if the step running it failed."""
        box = inbox(asyncio.get_running_loop())
        events: asyncio.Queue[int | None] = asyncio.Queue()
        seq = self.seq = self.engine.submit(self.prompt_ids, self.params, lambda item: box.put(events, item))
        try:
            while (token := await events.get()) is not None:
                self.completion_tokens += 1
                piece = self.stops.feed(self.decoder.push(token))
                if piece:
                    yield piece
                if self.stops.stopped:
                    self.finish_reason = "stop"
                    return
            if seq.error is not None:
                raise seq.error
            tail = self.stops.flush()
            if tail:
                yield tail
            self.finish_reason = seq.finish_reason if seq.finish_reason in ("stop", "length") else "length"
        finally:
            if not seq.finished:
                self.engine.abort(seq)  # stop string, client gone, or cancelled: free its blocks now

    async def text(self) -> str:
        return "".join([piece async for piece in self.pieces()])


async def wait_disconnect(request: Request) -> None:
    """Returns when the client hangs up (call after the body was read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(request: Request, work) -> tuple[bool, object]:
    """Run the coroutine ``work``; cancel it if the client leaves first. Returns (finished, result)."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(wait_disconnect(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if task.done():
        return True, task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return False, None
