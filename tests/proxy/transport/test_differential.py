"""The default transport against httpx's on a corpus of broken upstream responses.

For every case in :mod:`tests.support.transport_corpus`, a raw-socket upstream plays the case to
the first request and echoes each later request's tag. Ours must give the corpus's
outcome, agree with httpx's transport (``httpx.AsyncHTTPTransport``, h11) unless the case
says why it does better, and — the invariant — the next three requests on the pool must
each get their own response.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from proxy.transport import H1Transport
from tests.support.rawserver import RawRequest, RawServer, echo
from tests.support.transport_corpus import CASES, Case

#: the read deadline of a request that must time out (and of httpx's later requests, whose outcomes
#: are not compared: it may wait on a connection the upstream holds); every other gets LONG_READ_S,
#: so a stall of this one test process never turns an answer into a 504
SHORT_READ_S, LONG_READ_S = 0.5, 30.0


async def outcome(transport: httpx.AsyncBaseTransport, url: str, tag: str, read: float) -> str:
    """What a client of the proxy would see: ``status:body``, ``status:truncated``, or the
    proxy's own ``502`` / ``504`` for a failed exchange."""
    timeout = {"connect": 2.0, "read": read, "write": 2.0, "pool": 2.0}
    request = httpx.Request(
        "POST", f"{url}/v1/chat/completions?tag={tag}", content=b"{}", extensions={"timeout": timeout}
    )
    try:
        response = await transport.handle_async_request(request)
    except httpx.TimeoutException:
        return "504"
    except httpx.TransportError:
        return "502"
    try:
        body = b"".join([chunk async for chunk in response.stream])
    except httpx.TransportError:
        return f"{response.status_code}:truncated"
    finally:
        await response.stream.aclose()
    return f"{response.status_code}:{body.decode(errors='replace')}"


async def play(transport: httpx.AsyncBaseTransport, case: Case, ours: bool) -> list[str]:
    """The first request's outcome, then three more requests' outcomes on the same pool. Ours must
    close a connection that got bytes unasked or is held (waited for: an event, not a delay)."""

    def script(request: RawRequest):
        return case.reply if request.tag == "t1" else echo(request.tag)

    with RawServer(script) as server:
        first = SHORT_READ_S if case.ours == "504" else LONG_READ_S
        results = [await outcome(transport, server.url, "t1", first)]
        if ours and (case.reply.idle or case.reply.hold):
            (t1,) = [r for r in server.requests if r.tag == "t1"]
            ended = await asyncio.to_thread(server.wait_ended, t1.conn, 10)
            assert ended, f"{case.name}: the transport kept that connection"
        elif case.reply.idle:
            await asyncio.sleep(0.15)  # httpx's outcomes after t1 are not compared
        for n in (2, 3, 4):
            results.append(
                await outcome(transport, server.url, f"t{n}", LONG_READ_S if ours else SHORT_READ_S)
            )
    await transport.aclose()
    return results


def _own(n: int) -> str:
    return '200:{"tag":"t%d"}' % n


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_against_httpx(case: Case):
    ours = asyncio.run(play(H1Transport(), case, ours=True))
    theirs = asyncio.run(play(httpx.AsyncHTTPTransport(retries=0), case, ours=False))
    assert ours[0] == case.ours, f"ours gave {ours[0]!r}; httpx gave {theirs[0]!r}"
    assert ours[1:] == [_own(2), _own(3), _own(4)], "a later request got a response that was not its own"
    if not case.better:
        assert ours[0] == theirs[0], (
            f"httpx gave {theirs[0]!r}: explain the difference in the corpus or match it"
        )
