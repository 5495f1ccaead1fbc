"""Test controls carried in request headers, and the hold/release rendezvous.

- ``x-emulator-status: N`` — answer HTTP N in the provider's error shape.
- ``x-emulator-delay-ms: N`` — sleep N ms (real time) before answering.
- ``x-emulator-hold: TOKEN`` — streaming: after the first SSE event, wait until
  ``POST /_emulator/release/TOKEN`` (or the config's hold timeout, 10 s).
- ``x-emulator-chunks: N`` — stream the reply text in N pieces.

A malformed control value is a 400 (the test is wrong, not the emulator). This module
does not answer requests itself.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass

from starlette.datastructures import Headers

MAX_DELAY_MS = 600_000
MAX_CHUNKS = 10_000
MAX_RELEASED = 10_000


class ControlError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Controls:
    status: int | None = None
    delay_ms: int = 0
    hold: str | None = None
    chunks: int | None = None


def _int_header(headers: Headers, name: str, low: int, high: int) -> int | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise ControlError(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise ControlError(f"{name} must be between {low} and {high}, got {value}")
    return value


def parse_controls(headers: Headers) -> Controls:
    hold = headers.get("x-emulator-hold")
    if hold is not None and not (0 < len(hold) <= 200):
        raise ControlError("x-emulator-hold must be a token of 1-200 characters")
    return Controls(
        status=_int_header(headers, "x-emulator-status", 400, 599),
        delay_ms=_int_header(headers, "x-emulator-delay-ms", 0, MAX_DELAY_MS) or 0,
        hold=hold,
        chunks=_int_header(headers, "x-emulator-chunks", 1, MAX_CHUNKS),
    )


class Holds:
    """Named events: a stream waits on one; a release sets it (even before anyone waits)."""

    def __init__(self) -> None:
        self._events: OrderedDict[str, asyncio.Event] = OrderedDict()

    def _event(self, token: str) -> asyncio.Event:
        event = self._events.get(token)
        if event is None:
            event = self._events[token] = asyncio.Event()
            while len(self._events) > MAX_RELEASED:
                self._events.popitem(last=False)
        return event

    def release(self, token: str) -> None:
        self._event(token).set()

    async def wait(self, token: str, timeout_s: float) -> bool:
        """True when released, False on timeout."""
        try:
            await asyncio.wait_for(self._event(token).wait(), timeout_s)
            return True
        except TimeoutError:
            return False
