"""proxy.transport.response_parser: one response parsed by llhttp, fed in arbitrary pieces."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from proxy.transport.response_parser import HIGH_WATER, ResponseParser


def feed(data: bytes, method: str = "POST", pieces: int = 1) -> ResponseParser:
    ex = ResponseParser(method, lambda: None, lambda: None)
    size = max(1, len(data) // pieces)
    for i in range(0, len(data), size):
        ex.feed(data[i : i + size])
        if ex.failed:
            break
    return ex


@pytest.mark.parametrize("pieces", [1, 3, 1000])
def test_content_length_response_in_any_pieces(pieces):
    ex = feed(b"HTTP/1.1 201 Created\r\nX-A: 1\r\nContent-Length: 5\r\n\r\nhello", pieces=pieces)
    assert (ex.status, ex.headers, ex.take(), ex.complete, ex.keep_alive, ex.leftover) == (
        201,
        [(b"X-A", b"1"), (b"Content-Length", b"5")],
        b"hello",
        True,
        True,
        False,
    )


def test_keep_alive_follows_version_and_connection_header():
    assert not feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keep_alive
    assert not feed(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive
    assert feed(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keep_alive


def test_bytes_after_the_end_are_a_leftover_not_a_second_response():
    ex = feed(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil"
    )
    assert (ex.take(), ex.complete, ex.leftover, ex.failed) == (b"ok", True, True, None)


def test_head_response_ends_with_its_head_and_a_body_after_it_is_a_leftover():
    ex = feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", method="HEAD")
    assert (ex.complete, ex.keep_alive, ex.leftover) == (True, True, False)
    ex = feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nsmuggled!", method="HEAD")
    assert ex.leftover


def test_interim_responses_are_skipped_and_trailers_dropped():
    ex = feed(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: x\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n"
    )
    assert (ex.status, ex.headers, ex.take(), ex.complete) == (
        200,
        [(b"Transfer-Encoding", b"chunked")],
        b"ok",
        True,
    )


def test_close_delimited_body_ends_at_eof_and_is_never_kept():
    ex = feed(b"HTTP/1.1 200 OK\r\n\r\npart")
    assert not ex.complete
    ex.eof()
    assert (ex.take(), ex.complete, ex.keep_alive, ex.failed) == (b"part", True, False, None)


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",  # cut mid-body
        b"HTTP/1.1 200 OK\r\nContent-Le",  # cut mid-head
        b"",  # nothing at all
    ],
)
def test_eof_before_the_end_is_an_error(data):
    ex = feed(data)
    ex.eof()
    assert isinstance(ex.failed, httpx.RemoteProtocolError) and not ex.complete


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
        b"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 2000 Odd\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n",
    ],
)
def test_malformed_responses_fail(data):
    ex = feed(data)
    assert isinstance(ex.failed, httpx.RemoteProtocolError), ex.failed
    assert not ex.complete


def test_lf_only_head_is_tolerated_like_h11():
    ex = feed(b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
    assert (ex.status, ex.take(), ex.complete) == (200, b"ok", True)


def test_204_and_304_have_no_body_whatever_their_content_length():
    for status in (204, 304):
        ex = feed(b"HTTP/1.1 %d X\r\nContent-Length: 12\r\n\r\n" % status)
        assert (ex.status, ex.complete, ex.keep_alive, ex.take()) == (status, True, True, b"")


def test_reading_pauses_above_the_high_water_mark_and_resumes_when_taken():
    calls = []
    ex = ResponseParser("POST", lambda: calls.append("pause"), lambda: calls.append("resume"))
    size = HIGH_WATER * 2
    ex.feed(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"x" * (HIGH_WATER + 10))
    assert calls == ["pause"]
    assert len(ex.take()) == HIGH_WATER + 10 and calls == ["pause", "resume"]


def test_head_waits_and_raises_the_timeout_as_read_timeout():
    async def go():
        ex = ResponseParser("POST", lambda: None, lambda: None)
        with pytest.raises(httpx.ReadTimeout):
            await ex.head(0.01)
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, ex.feed, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await ex.head(1.0)
        return ex.status

    assert asyncio.run(go()) == 200


def test_a_trailer_that_never_ends_is_refused_not_buffered():
    ex = ResponseParser("POST", lambda: None, lambda: None)
    ex.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: ")
    for _ in range(100):  # 6.4 MB of one trailer value, in 64 KiB reads
        ex.feed(b"a" * 65536)
        if ex.failed:
            break
    assert isinstance(ex.failed, httpx.RemoteProtocolError) and ex.take() == b"ok"


def test_a_long_stream_of_small_chunks_is_not_mistaken_for_framing_abuse():
    ex = ResponseParser("POST", lambda: None, lambda: None)
    ex.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(50_000):
        ex.feed(b"1\r\nx\r\n")
    ex.feed(b"0\r\n\r\n")
    assert ex.failed is None and ex.complete and len(ex.take()) == 50_000


def test_a_broken_connection_is_a_read_error():
    ex = feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nsho")
    ex.eof(ConnectionResetError())
    assert isinstance(ex.failed, httpx.ReadError)
