"""Server-sent events: the streaming body that honours ``x-emulator-hold``.

Each event is written (and flushed by uvicorn) on its own, so a client sees event 1
before event 2 exists. OpenAI streams are ``data:`` lines ending in ``data: [DONE]``;
Anthropic and the Responses API also send ``event:`` lines; the frames are encoded by
:mod:`analyzer.wire`. This module does not build the events' payloads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from starlette.responses import StreamingResponse

from analyzer.wire import SSE_MEDIA_TYPE
from proxy.emulator.state import Call, EmulatorState

SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


async def _body(state: EmulatorState, call: Call, events: Iterable[bytes]) -> AsyncIterator[bytes]:
    for i, event in enumerate(events):
        yield event
        if i == 0 and call.controls.hold:
            await state.holds.wait(call.controls.hold, state.config.hold_timeout_s)


def sse_response(
    state: EmulatorState, call: Call, events: Iterable[bytes], headers: dict[str, str]
) -> StreamingResponse:
    return StreamingResponse(
        _body(state, call, events), media_type=SSE_MEDIA_TYPE, headers={**SSE_HEADERS, **headers}
    )
