"""Property: on one pooled connection, no response ever reaches a request other than its own.

Hypothesis draws a sequence of upstream behaviours (well-formed replies in every framing,
replies followed by a smuggled extra response, an unsolicited 408 on the idle connection,
interim 1xx, close-delimited bodies, malformed heads, hang-ups, LF-only framing on a
connection then held unanswered); requests are sent one
after another through one :class:`~proxy.transport.H1Transport`, each tagged. Every
request either gets its own tagged response, or (only where its own reply was broken) an
error; never another request's bytes and never the smuggled ones.
"""

from __future__ import annotations

import asyncio

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.transport import H1Transport
from tests.support.rawserver import RawRequest, RawServer, Reply, echo_bytes


def _chunked(tag: str) -> bytes:
    body = b'{"tag":"' + tag.encode() + b'"}'
    return (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}".encode()
        + b"\r\n"
        + body
        + b"\r\n0\r\n\r\n"
    )


def _smuggled(tag: str) -> bytes:
    return echo_bytes("SMUGGLED-" + tag)


def _no_length(tag: str) -> bytes:
    return b"HTTP/1.1 200 OK\r\n\r\n" + b'{"tag":"' + tag.encode() + b'"}'


# kind → (reply for a tag, does the client get its own body)
KINDS = {
    "length": (lambda t: Reply([(echo_bytes(t), 0)]), True),
    "chunked": (lambda t: Reply([(_chunked(t), 0)]), True),
    "split": (lambda t: Reply([(echo_bytes(t)[:20], 0), (echo_bytes(t)[20:], 0.005)]), True),
    "interim": (lambda t: Reply([(b"HTTP/1.1 100 Continue\r\n\r\n" + echo_bytes(t), 0)]), True),
    "extra-after-length": (lambda t: Reply([(echo_bytes(t) + _smuggled(t), 0)]), True),
    "extra-after-chunked": (lambda t: Reply([(_chunked(t) + _smuggled(t), 0)]), True),
    "idle-408": (
        lambda t: Reply(
            [(echo_bytes(t), 0)], idle=[(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n", 0.02)]
        ),
        True,
    ),
    "idle-smuggle": (lambda t: Reply([(echo_bytes(t), 0)], idle=[(_smuggled(t), 0.02)]), True),
    "close-delimited": (lambda t: Reply([(_no_length(t), 0)], close=True), True),
    "connection-close": (
        lambda t: Reply(
            [(echo_bytes(t).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1), 0)], close=True
        ),
        True,
    ),
    "204-with-body": (lambda t: Reply([(b"HTTP/1.1 204 No Content\r\n\r\n" + _smuggled(t), 0)]), False),
    "101": (
        lambda t: Reply([(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n" + _smuggled(t), 0)]),
        False,
    ),
    "bad-header": (
        lambda t: Reply([(b"HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 2\r\n\r\nok" + _smuggled(t), 0)]),
        False,
    ),
    "hang-up": (lambda t: Reply([], close=True), False),
    # framing llhttp tolerates, RFC 9112 does not, then the connection is held unanswered: never reused
    "lf-only-held": (lambda t: Reply([(echo_bytes(t).replace(b"\r\n", b"\n"), 0)], hold=True), True),
    "lf-chunk-held": (lambda t: Reply([(_chunked(t).replace(b"}\r\n0", b"}\n0"), 0)], hold=True), True),
}
TIMEOUT = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}


async def _one(transport: H1Transport, url: str, tag: str) -> tuple[int | None, bytes | None]:
    request = httpx.Request("POST", f"{url}/x?tag={tag}", content=b"{}", extensions={"timeout": TIMEOUT})
    try:
        response = await transport.handle_async_request(request)
    except httpx.TransportError:
        return None, None
    try:
        return response.status_code, b"".join([c async for c in response.stream])
    except httpx.TransportError:
        return response.status_code, None
    finally:
        await response.stream.aclose()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=8))
def test_no_response_reaches_another_request(kinds):
    tags = [f"r{i}" for i in range(len(kinds))]
    by_tag = dict(zip(tags, kinds))

    def script(request: RawRequest) -> Reply:
        return KINDS[by_tag[request.tag]][0](request.tag)

    async def go():
        transport = H1Transport()
        results = []
        with RawServer(script) as server:
            for tag, kind in zip(tags, kinds):
                results.append(await _one(transport, server.url, tag))
                if kind.startswith("idle-"):
                    await asyncio.sleep(0.08)  # the unsolicited bytes land while the connection is idle
        await transport.aclose()
        return results

    for tag, kind, (status, body) in zip(tags, kinds, asyncio.run(go())):
        own = b'{"tag":"' + tag.encode() + b'"}'
        if body is not None:
            assert b"SMUGGLED" not in body and (body in (b"", own)), (kind, body)
        if KINDS[kind][1]:
            assert (status, body) == (200, own), (kind, status, body)
        elif kind == "204-with-body":
            assert (status, body) == (204, b"")
        else:
            assert status is None, (kind, status)
