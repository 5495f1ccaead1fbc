"""An upstream body read in part before the response head goes out: :class:`ReadAhead`.

The relay reads ahead in two cases and relays every byte read first, unchanged, then the rest:
:func:`read_at_most` (a rewritten Gemini request answered 400 / 403 / 404: the error's first
bytes, to tell a ``cachedContent`` refusal; a read that breaks off raises, so the relay answers
its own 502 / 504) and :func:`peek_diagnostics` (an Anthropic 200 to a request naming
``diagnostics.previous_message_id``, read to its first event within bounds; a later first
event leaves the header off and the read goes on, ``pending``).
It decides nothing about what the client sees beyond that order.
See docs/request-path.md (the relay).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from typing import cast

import httpx

from proxy.provider_diagnostics import MAX_SSE_WAIT_S, Peek, header_value


class ReadAhead:
    """The chunks read (``head``), the body after them (``rest``; None: ``head`` is all of it),
    a read the peek's deadline left under way (``pending``; awaiting it cancels it with the
    awaiting task, and its error is raised where the body would have failed) and a read error
    to raise after ``head`` (``failed``)."""

    __slots__ = ("failed", "head", "pending", "rest")

    def __init__(
        self,
        head: list[bytes],
        rest: AsyncIterator[bytes] | None,
        failed: BaseException | None = None,
        pending: asyncio.Task[bytes | None] | None = None,
    ) -> None:
        self.head, self.rest, self.failed, self.pending = head, rest, failed, pending

    async def body(self) -> AsyncIterator[bytes]:
        """The whole body as the upstream sent it: what was read, then the rest."""
        for chunk in self.head:
            yield chunk
        if self.pending is not None:
            pending, self.pending = self.pending, None
            chunk = await pending
            if chunk is None:
                return
            yield chunk
        if self.rest is not None:
            async for chunk in self.rest:
                yield chunk
        if self.failed is not None:
            raise self.failed

    def drop(self) -> None:
        """Cancels a read still under way; marks a finished one's error as seen."""
        read, self.pending = self.pending, None
        if read is None:
            return
        if not read.done():
            read.cancel()
        elif not read.cancelled():
            read.exception()


async def read_at_most(response: httpx.Response, limit: int) -> ReadAhead:
    """Reads until more than ``limit`` bytes or the end; a read that breaks off raises
    (``httpx.TransportError`` / ``OSError``)."""
    body = _raw(response)
    head: list[bytes] = []
    size = 0
    while size <= limit:
        try:
            chunk = await body.__anext__()
        except StopAsyncIteration:
            return ReadAhead(head, None)
        head.append(chunk)
        size += len(chunk)
    return ReadAhead(head, body)


def _raw(response: httpx.Response) -> AsyncIterator[bytes]:
    """The response's body as the upstream sent it (never decoded)."""
    return cast("AsyncIterable[bytes]", response.stream).__aiter__()


async def _next_chunk(body: AsyncIterator[bytes]) -> bytes | None:
    """The next chunk of ``body``; None at its end (a task cannot end in StopAsyncIteration)."""
    try:
        return await body.__anext__()
    except StopAsyncIteration:
        return None


async def peek_diagnostics(response: httpx.Response) -> tuple[ReadAhead, str | None]:
    """Reads ``response`` ahead (bounded, a stream also in time) for the provider's miss
    reason; returns what was read and the header value (None: no reason, or too late: the head
    then goes out without it). A client gone (or a shutdown cut) stops the read too; a read that
    breaks off is relayed as it would have been, after the bytes before it."""
    peek = Peek(response.headers.get("content-type", ""), response.headers.get("content-encoding"))
    body = _raw(response)
    rest: AsyncIterator[bytes] | None = body
    head: list[bytes] = []
    failed: BaseException | None = None
    pending: asyncio.Task[bytes | None] | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_SSE_WAIT_S if peek.stream else None
    while not peek.done:
        try:
            if deadline is None:
                chunk = await body.__anext__()
            else:
                read = loop.create_task(_next_chunk(body))
                try:
                    await asyncio.wait((read,), timeout=max(0.0, deadline - loop.time()))
                except BaseException:
                    read.cancel()
                    raise
                if not read.done():
                    pending = read
                    break
                got = read.result()
                if got is None:
                    raise StopAsyncIteration
                chunk = got
        except StopAsyncIteration:
            rest = None
            peek.end()
            break
        except (httpx.TransportError, OSError) as exc:
            failed, rest = exc, None
            break
        head.append(chunk)
        peek.feed(chunk)
    return ReadAhead(head, rest, failed, pending), header_value(peek.reason)
