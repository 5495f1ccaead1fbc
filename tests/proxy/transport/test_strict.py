"""proxy.transport.strict: framing llhttp tolerates but RFC 9112 (and h11, mostly) does not.

A response whose framing was only tolerated is delivered, and its connection is never
reused. Checked three ways: the grammar pieces alone; the parser's ``tolerated`` over a
corpus fed in any pieces; and against h11 — whatever h11 refuses and llhttp accepts must be
marked, and every strict response (what real upstreams send) must stay reusable.
"""

from __future__ import annotations

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.transport.response_parser import ResponseParser
from proxy.transport.strict import ChunkFraming, strict_codings, strict_heads

T1 = b'{"tag":"t1"}'
CL = b"Content-Length: 12"
STRICT = {
    "content-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + CL + b"\r\n\r\n" + T1,
    "no reason phrase": b"HTTP/1.1 200\r\n" + CL + b"\r\n\r\n" + T1,
    "empty reason phrase": b"HTTP/1.1 200 \r\n" + CL + b"\r\n\r\n" + T1,
    "obs-text and tabs": b"HTTP/1.1 200 O\xe9K\r\nX-A:\tv a\xff\t\r\n" + CL + b"\r\n\r\n" + T1,
    "empty value": b"HTTP/1.1 200 OK\r\nX-Empty:\r\n" + CL + b"\r\n\r\n" + T1,
    "HTTP/1.0 keep-alive": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n" + CL + b"\r\n\r\n" + T1,
    "interim responses": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\n"
    + CL
    + b"\r\n\r\n"
    + T1,
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n"
    + T1[:6]
    + b"\r\n6\r\n"
    + T1[6:]
    + b"\r\n0\r\n\r\n",
    "chunked, Chunked spelled": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nC\r\n"
    + T1
    + b"\r\n0\r\n\r\n",
    "chunk extensions": b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc;a=b;q="x y"\r\n'
    + T1
    + b"\r\n0;end\r\n\r\n",
    "trailers": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\nc\r\n"
    + T1
    + b"\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n",
    "chunk data holding LF and CRLF": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\na\nb\r\n\n\r\n\r\n0\r\n\r\n",
    "SSE stream": b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    + b"".join(f"{len(e):x}\r\n".encode() + e + b"\r\n" for e in (b'data: {"a":1}\n\n', b"data: [DONE]\n\n"))
    + b"0\r\n\r\n",
    "204": b"HTTP/1.1 204 No Content\r\n\r\n",
    "close-delimited": b"HTTP/1.1 200 OK\r\n\r\n" + T1,
}
# llhttp accepts each of these as the pool runs it; RFC 9112 does not
TOLERATED = {
    "LF-only head": (b"HTTP/1.1 200 OK\n" + CL + b"\n\n" + T1, "bare LF"),
    "LF ending the status line": (b"HTTP/1.1 200 OK\n" + CL + b"\r\n\r\n" + T1, "bare LF"),
    "LF ending a header line": (b"HTTP/1.1 200 OK\r\nX-A: b\n" + CL + b"\r\n\r\n" + T1, "bare LF"),
    "LF-only empty line": (b"HTTP/1.1 200 OK\r\n" + CL + b"\r\n\n" + T1, "bare LF"),
    "LF-only 100 Continue": (
        b"HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\n" + CL + b"\r\n\r\n" + T1,
        "bare LF",
    ),
    "LF-only head, Connection: close": (
        b"HTTP/1.1 200 OK\nConnection: close\n" + CL + b"\n\n" + T1,
        "bare LF",
    ),
    "empty line before the status line": (b"\r\nHTTP/1.1 200 OK\r\n" + CL + b"\r\n\r\n" + T1, "empty line"),
    "control byte in the reason": (b"HTTP/1.1 200 O\x01K\r\n" + CL + b"\r\n\r\n" + T1, "grammar"),
    "DEL in the reason": (b"HTTP/1.1 200 O\x7fK\r\n" + CL + b"\r\n\r\n" + T1, "grammar"),
    "bare LF after a chunk's data": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + T1 + b"\n0\r\n\r\n",
        "chunked framing",
    ),
    "LF-only trailer line": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + T1 + b"\r\n0\r\nX-T: 1\n\r\n",
        "chunked framing",
    ),
    "LF-only end of the body": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + T1 + b"\r\n0\r\n\n",
        "chunked framing",
    ),
    "Transfer-Encoding chunked, chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\nc\r\n" + T1 + b"\r\n0\r\n\r\n",
        "Transfer-Encoding",
    ),
    "Transfer-Encoding gzip, chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nc\r\n" + T1 + b"\r\n0\r\n\r\n",
        "Transfer-Encoding",
    ),
    "two Transfer-Encoding fields": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n"
        + T1
        + b"\r\n0\r\n\r\n",
        "Transfer-Encoding",
    ),
}


def parse(data: bytes, pieces: int) -> ResponseParser:
    p = ResponseParser("POST", lambda: None, lambda: None)
    size = max(1, len(data) // pieces)
    for i in range(0, len(data), size):
        p.feed(data[i : i + size])
    p.eof()
    return p


def h11_accepts(data: bytes) -> bool:
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("Host", "x"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(data)
    conn.receive_data(b"")
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                return False
            if isinstance(event, h11.EndOfMessage):
                return True
    except h11.RemoteProtocolError:
        return False


@pytest.mark.parametrize("pieces", [1, 2, 5, 10_000])
@pytest.mark.parametrize("name", sorted(STRICT))
def test_strict_responses_stay_reusable(name, pieces):
    p = parse(STRICT[name], pieces)
    assert p.failed is None and p.complete
    assert p.tolerated is None, p.tolerated
    assert h11_accepts(STRICT[name])


@pytest.mark.parametrize("pieces", [1, 2, 5, 10_000])
@pytest.mark.parametrize("name", sorted(TOLERATED))
def test_tolerated_framing_is_delivered_and_named(name, pieces):
    data, why = TOLERATED[name]
    p = parse(data, pieces)
    assert p.failed is None and p.complete, p.failed
    assert b"".join(p.chunks) == T1
    assert p.tolerated is not None and why in p.tolerated, p.tolerated


def test_whatever_h11_refuses_and_llhttp_accepts_is_marked():
    """The issue's yardstick: h11's strictness. Each response of both corpora that h11
    refuses but the pool's parser delivers must be marked, so its connection is not reused."""
    for name, data in [*STRICT.items(), *((n, d) for n, (d, _) in TOLERATED.items())]:
        p = parse(data, 1)
        if p.failed is None and not h11_accepts(data):
            assert p.tolerated is not None, name


def test_strict_heads_finds_the_end_of_the_final_head():
    head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nA: b\r\n\r\n"
    assert strict_heads(head + b"body\n\nmore") == (len(head), None)
    assert strict_heads(b"HTTP/1.1 200 OK\nA: b\n\nbody")[1] == "a bare LF ends a line of the head"
    assert strict_heads(b"HTTP/1.1 200 OK\r\nA: a\r\n b\r\n\r\n")[1] == "obsolete line folding in the head"
    assert strict_heads(b"\r\nHTTP/1.1 200 OK\r\n\r\n")[1] == "an empty line before the status line"
    assert strict_heads(b"HTTP/1.1 200 OK\r\nA : b\r\n\r\n")[1] == "a head line outside RFC 9112's grammar"
    assert strict_heads(b"HTTP/2.0 200 OK\r\n\r\n")[0] is None


def test_codings():
    assert strict_codings([(b"Content-Length", b"3")]) is None
    assert strict_codings([(b"transfer-encoding", b" chunked ")]) is None
    assert strict_codings([(b"Transfer-Encoding", b"gzip, chunked")])
    assert strict_codings([(b"Transfer-Encoding", b"chunked"), (b"Transfer-Encoding", b"chunked")])


def test_chunk_framing_in_any_pieces():
    body = b"5\r\nhello\r\n3;x=y\r\n\r\n\n\r\n0\r\nT: 1\r\n\r\nLEFTOVER\n"
    for size in (1, 2, 3, 7, len(body)):
        check = ChunkFraming()
        for i in range(0, len(body), size):
            check.feed(body[i : i + size])
        assert check.fault is None, size
    for bad in (
        b"5\nhello\r\n0\r\n\r\n",
        b"5\r\nhello\n0\r\n\r\n",
        b"5\r\nhelloX\r\n0\r\n\r\n",
        b"0\r\n\n",
        b"0\r\nT : 1\r\n\r\n",
    ):
        check = ChunkFraming()
        check.feed(bad)
        assert check.fault is not None, bad


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=6),
    st.lists(st.integers(1, 30), min_size=1, max_size=30),
    st.booleans(),
    st.data(),
)
def test_chunk_framing_property(chunks, cuts, break_one, data):
    """Any chunked body in any pieces checks clean; the same with one framing CRLF made a
    bare LF is a fault (chunk data may hold any bytes, CR and LF included)."""
    lines = []  # (framing?, bytes)
    for chunk in chunks:
        lines += [(True, f"{len(chunk):x}\r\n".encode()), (False, chunk), (True, b"\r\n")]
    lines += [(True, b"0\r\n"), (True, b"\r\n")]
    if break_one:
        framing = [k for k, (is_framing, _) in enumerate(lines) if is_framing]
        k = data.draw(st.sampled_from(framing))
        lines[k] = (True, lines[k][1][:-2] + b"\n")
    body = b"".join(piece for _, piece in lines)
    check, i = ChunkFraming(), 0
    for cut in cuts * (len(body) // sum(cuts) + 1):
        if i >= len(body):
            break
        check.feed(body[i : i + cut])
        i += cut
    assert (check.fault is not None) == break_one, (body, check.fault)
