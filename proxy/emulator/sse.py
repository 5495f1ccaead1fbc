"""Server-sent events: encoding, and the streaming body that honours ``x-emulator-hold``.

Each event is written (and flushed by uvicorn) on its own, so a client sees event 1
before event 2 exists. OpenAI streams are ``data:`` lines ending in ``data: [DONE]``;
Anthropic and the Responses API also send ``event:`` lines. This module does not build
the events' payloads.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Iterable

import orjson
from starlette.responses import StreamingResponse

from proxy.emulator.state import Call, EmulatorState

DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def data_event(payload: Any) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def named_event(name: str, payload: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


async def _body(state: EmulatorState, call: Call, events: Iterable[bytes]) -> AsyncIterator[bytes]:
    for i, event in enumerate(events):
        yield event
        if i == 0 and call.controls.hold:
            await state.holds.wait(call.controls.hold, state.config.hold_timeout_s)


def sse_response(state: EmulatorState, call: Call, events: Iterable[bytes], headers: dict[str, str]) -> StreamingResponse:
    return StreamingResponse(
        _body(state, call, events), media_type="text/event-stream; charset=utf-8", headers={**SSE_HEADERS, **headers}
    )
