"""Malformed and edge-case upstream responses, for the transport's differential tests.

Each :class:`Case` says what the upstream does with the FIRST request (tag ``t1``); every
later request gets a well-formed reply echoing its own tag. ``ours`` is what the
proxy's default transport must give for the first request: ``"2xx:<body>"`` style
outcomes (see :func:`tests.proxy.transport.test_differential.outcome`), ``"502"`` for a
protocol or connection error, ``"504"`` for a timeout, ``"<class>:truncated"`` for a body
cut short. ``better`` explains a case where ours deliberately differs from httpx's
transport on the first request (stricter parsing); otherwise both must agree on it. On
the requests after it, ours must always serve each its own response (httpx's does not
after a body runs past its length or a 204 carries one: it hands the extra bytes on; nor
after framing that h11 tolerates but RFC 9112 does not, such as LF-only lines, when the upstream
then holds the connection without answering: it reuses the connection and times out).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.rawserver import Reply, echo_bytes


def _ok(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body


EVIL = echo_bytes("EVIL")  # a whole extra response: whoever receives it got the wrong one
T1 = b'{"tag":"t1"}'
OK1 = "200:" + T1.decode()


@dataclass(frozen=True)
class Case:
    name: str
    reply: Reply
    ours: str
    better: str = ""  # why ours may differ from httpx's transport


CASES = [
    Case("well-formed", Reply([(echo_bytes("t1"), 0)]), "200:" + T1.decode()),
    Case(
        "body past Content-Length (a second response)",
        Reply([(echo_bytes("t1") + EVIL, 0)]),
        "200:" + T1.decode(),
    ),
    Case(
        "body past Content-Length (junk)", Reply([(echo_bytes("t1") + b"JUNKJUNK", 0)]), "200:" + T1.decode()
    ),
    Case(
        "bytes after the last chunk",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\n\r\n"
                    + EVIL,
                    0,
                )
            ]
        ),
        "200:" + T1.decode(),
    ),
    Case(
        "408 on the idle connection, kept open",
        Reply(
            [(echo_bytes("t1"), 0)],
            idle=[(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n", 0.05)],
        ),
        "200:" + T1.decode(),
    ),
    Case(
        "408 on the idle connection, then close",
        Reply(
            [(echo_bytes("t1"), 0)],
            idle=[(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 0.05)],
        ),
        "200:" + T1.decode(),
    ),
    Case(
        "101 Switching Protocols",
        Reply(
            [
                (
                    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
                    + EVIL,
                    0,
                )
            ]
        ),
        "502",
    ),
    Case(
        "bare CR in a header value",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
    ),
    Case(
        "NUL in a header value",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
    ),
    Case("LF-only head", Reply([(b"HTTP/1.1 200 OK\nContent-Length: 12\n\n" + T1, 0)]), "200:" + T1.decode()),
    # Framing llhttp tolerates but RFC 9112 does not, then the upstream holds the connection and never answers on it
    # again: delivered, but that connection is never reused (the next request goes on a new one and gets its answer).
    Case(
        "LF-only head, then the connection held",
        Reply([(b"HTTP/1.1 200 OK\nContent-Length: 12\n\n" + T1, 0)], hold=True),
        OK1,
    ),
    Case(
        "LF ending the status line only, then held",
        Reply([(b"HTTP/1.1 200 OK\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True),
        OK1,
    ),
    Case(
        "LF ending one header line, then held",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A: b\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True),
        OK1,
    ),
    Case(
        "LF-only empty line ending the head, then held",
        Reply([(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\n" + T1, 0)], hold=True),
        OK1,
    ),
    Case(
        "LF-only head split byte by byte, then held",
        Reply([(bytes([b]), 0.001) for b in b"HTTP/1.1 200 OK\nContent-Length: 12\n\n" + T1], hold=True),
        OK1,
    ),
    Case(
        "LF-only 100 Continue before a strict 200, then held",
        Reply(
            [(b"HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True
        ),
        OK1,
    ),
    Case(
        "LF-only chunked head, then held",
        Reply(
            [(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\nc\r\n" + T1 + b"\r\n0\r\n\r\n", 0)], hold=True
        ),
        OK1,
    ),
    Case(
        "LF-only trailers, then held",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\nX-T: 1\n\n",
                    0,
                )
            ],
            hold=True,
        ),
        OK1,
    ),
    Case(
        "LF-only end of the chunked body, then held",
        Reply(
            [(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + T1 + b"\r\n0\r\n\n", 0)],
            hold=True,
        ),
        OK1,
    ),
    Case(
        "control byte in the reason phrase, then held",
        Reply([(b"HTTP/1.1 200 O\x01K\r\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True),
        OK1,
    ),
    Case(
        "bare LF after a chunk's data, then held",
        Reply(
            [(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n" + T1 + b"\n0\r\n\r\n", 0)],
            hold=True,
        ),
        OK1,
        "h11 refuses a chunk's data not ended by CRLF; llhttp (the LF leniency) takes it: delivered, never reused",
    ),
    Case(
        "empty line before the status line, then held",
        Reply([(b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True),
        OK1,
        "llhttp skips empty lines before the status line (RFC 9112 2.2 lets a client); h11 refuses: delivered, never reused",
    ),
    Case(
        "Transfer-Encoding chunked, chunked, then held",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\n\r\n",
                    0,
                )
            ],
            hold=True,
        ),
        OK1,
        "h11 supports only a lone 'chunked'; llhttp frames by the last coding: delivered, never reused",
    ),
    Case(
        "two Transfer-Encoding fields, then held",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\n\r\n",
                    0,
                )
            ],
            hold=True,
        ),
        OK1,
        "h11 supports only a lone 'chunked'; llhttp frames by the last coding: delivered, never reused",
    ),
    Case(
        "obs-fold header, then held",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 12\r\n\r\n" + T1, 0)], hold=True),
        "502",
        "h11 unfolds obsolete line folding; RFC 9112 lets a client reject it",
    ),
    Case(
        "chunk size 0x5",
        Reply([(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0xc\r\n" + T1 + b"\r\n0\r\n\r\n", 0)]),
        "200:truncated",
    ),
    Case(
        "chunk size +1_0",
        Reply([(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+c\r\n" + T1 + b"\r\n0\r\n\r\n", 0)]),
        "200:truncated",
    ),
    Case("status 2000", Reply([(b"HTTP/1.1 2000 OK\r\nContent-Length: 12\r\n\r\n" + T1, 0)]), "502"),
    Case(
        "status 999",
        Reply([(b"HTTP/1.1 999 Odd\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
        "httpx hands out status 999, which the proxy's server cannot send (no such status)",
    ),
    Case("status 099", Reply([(b"HTTP/1.1 099 Odd\r\nContent-Length: 12\r\n\r\n" + T1, 0)]), "502"),
    Case(
        "Transfer-Encoding gzip with Content-Length",
        Reply([(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
    ),
    Case(
        "Content-Length and chunked",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\n\r\n",
                    0,
                )
            ]
        ),
        "502",
        "h11 prefers chunked (RFC 9112 allows either); a response framed two ways is a smuggling vector, refused",
    ),
    Case(
        "204 with Content-Length",
        Reply([(b"HTTP/1.1 204 No Content\r\nContent-Length: 12\r\n\r\n", 0)]),
        "204:",
    ),
    Case(
        "304 with Content-Length",
        Reply([(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 12\r\n\r\n", 0)]),
        "304:",
    ),
    Case(
        "204 followed by a body it may not have",
        Reply([(b"HTTP/1.1 204 No Content\r\n\r\n" + EVIL, 0)]),
        "204:",
    ),
    Case(
        "head split byte by byte",
        Reply([(bytes([b]), 0.001) for b in echo_bytes("t1")]),
        "200:" + T1.decode(),
    ),
    Case(
        "100 Continue then 103 then 200",
        Reply(
            [
                (
                    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                    + echo_bytes("t1"),
                    0,
                )
            ]
        ),
        "200:" + T1.decode(),
    ),
    Case(
        "a 300 KiB head",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\n"
                    + b"X-Big: "
                    + b"a" * 300_000
                    + b"\r\nContent-Length: 12\r\n\r\n"
                    + T1,
                    0,
                )
            ]
        ),
        "502",
    ),
    Case(
        "trailers",
        Reply(
            [
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\nc\r\n"
                    + T1
                    + b"\r\n0\r\nX-T: 1\r\n\r\n",
                    0,
                )
            ]
        ),
        "200:" + T1.decode(),
    ),
    Case(
        "close-delimited body",
        Reply([(b"HTTP/1.1 200 OK\r\n\r\n" + T1, 0)], close=True),
        "200:" + T1.decode(),
    ),
    Case(
        "HTTP/1.0 without keep-alive",
        Reply([(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\n" + T1, 0)], close=True),
        "200:" + T1.decode(),
    ),
    Case(
        "HTTP/1.0 keep-alive",
        Reply([(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "200:" + T1.decode(),
    ),
    Case(
        "Connection: close", Reply([(_ok(T1, b"Connection: close\r\n"), 0)], close=True), "200:" + T1.decode()
    ),
    Case(
        "two different Content-Lengths",
        Reply([(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 13\r\n\r\n" + T1, 0)]),
        "502",
    ),
    Case(
        "obs-fold header",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
        "h11 unfolds obsolete line folding; RFC 9112 lets a client reject it",
    ),
    Case(
        "body shorter than Content-Length, then close",
        Reply([(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + T1, 0)], close=True),
        "200:truncated",
    ),
    Case(
        "HTTP/2.0 status line",
        Reply([(b"HTTP/2.0 200 OK\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
        "h11 takes any HTTP/x.y status line; only 1.0 and 1.1 use this framing",
    ),
    Case("not HTTP at all", Reply([(b"SSH-2.0-OpenSSH_9.6\r\n", 0)], close=True), "502"),
    Case("closed without a response", Reply([], close=True), "502"),
    Case(
        "negative Content-Length", Reply([(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n" + T1, 0)]), "502"
    ),
    Case(
        "space before the colon",
        Reply([(b"HTTP/1.1 200 OK\r\nX-A : b\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "502",
    ),
    Case(
        "status line without reason",
        Reply([(b"HTTP/1.1 200\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "200:" + T1.decode(),
    ),
    Case(
        "500 with a body",
        Reply([(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 12\r\n\r\n" + T1, 0)]),
        "500:" + T1.decode(),
    ),
    Case(
        "chunked split across arrivals",
        Reply(
            [
                (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n" + T1[:6], 0),
                (b"\r\n6\r\n" + T1[6:] + b"\r\n0\r", 0.02),
                (b"\n\r\n", 0.02),
            ]
        ),
        "200:" + T1.decode(),
    ),
    Case("head never finished (timeout)", Reply([(b"HTTP/1.1 200 OK\r\nContent-Le", 0)]), "504"),
]
