"""proxy.transport.pool: the HTTP/1.1 pool against scripted loopback servers."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from proxy.transport import H1Transport
from tests.support.scripted_upstream import TIMEOUT, Scripted, fetch, run


def test_content_length_body_and_keep_alive_reuse():
    async def go():
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello"
        async with Scripted([ok, ok, ok]) as srv:
            t = H1Transport()
            for _ in range(3):
                resp, chunks = await fetch(
                    t, srv.url + "/v1/x?q=1", body=b'{"a":1}', headers={"authorization": "Bearer k"}
                )
                assert (resp.status_code, b"".join(chunks), resp.headers["x-a"]) == (200, b"hello", "1")
            await t.aclose()
            first = srv.requests[0]
            assert first.startswith(b"POST /v1/x?q=1 HTTP/1.1\r\n") and first.endswith(b'\r\n\r\n{"a":1}')
            assert b"\r\nauthorization: Bearer k\r\n" in first
            return srv.connections

    assert run(go()) == 1


def test_chunked_body_yields_payload_as_it_arrives_and_keeps_content_coding():
    async def go():
        reply = [
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n", 0),
            (b"5;ext=1\r\nhello\r\n", 0),
            (b"6\r\n world\r\n", 0.05),
            (b"0\r\nX-Trailer: t\r\n\r\n", 0),
        ]
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        async with Scripted([reply, ok]) as srv:
            t = H1Transport()
            resp, chunks = await fetch(t, srv.url)
            again, _ = await fetch(t, srv.url)
            await t.aclose()
            return resp, chunks, again.status_code, srv.connections

    resp, chunks, again, connections = run(go())
    assert chunks == [b"hello", b" world"]
    assert resp.headers["content-encoding"] == "gzip"
    assert (again, connections) == (200, 1)


def test_chunk_framing_split_anywhere_and_several_chunks_in_one_arrival():
    async def go():
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        split = [
            (head + b"3\r\nab", 0),
            (b"c\r", 0.03),
            (b"\n4\r\nde", 0.03),
            (b"fg\r\n1\r\nh\r\n0\r", 0.03),
            (b"\n\r\n", 0.03),
        ]
        joined = head + b"2\r\nij\r\n2\r\nkl\r\n0\r\n\r\n"
        async with Scripted([split, joined]) as srv:
            t = H1Transport()
            _, first = await fetch(t, srv.url)
            _, second = await fetch(t, srv.url)
            await t.aclose()
            return first, second, srv.connections

    first, second, connections = run(go())
    assert first[0] == b"ab" and b"".join(first) == b"abcdefgh"  # payload yielded as it arrives
    assert b"".join(second) == b"ijkl"
    assert connections == 1  # both bodies read to the end: the connection was reused


@pytest.mark.parametrize(
    ("body", "error"),
    [(b"zz\r\nab\r\n0\r\n\r\n", "chunk size"), (b"2\r\nabXX0\r\n\r\n", "malformed upstream response")],
)
def test_broken_chunk_framing_is_a_protocol_error(body, error):
    async def go():
        reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
        async with Scripted([reply]) as srv:
            t = H1Transport()
            with pytest.raises(httpx.RemoteProtocolError, match=error):
                await fetch(t, srv.url)
            await t.aclose()
            return sum(len(v) for v in t._idle.values())

    assert run(go()) == 0  # never reused


def test_bytes_after_the_last_chunk_mean_no_reuse():
    async def go():
        reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nJUNK"
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        async with Scripted([reply, ok], close_after=None) as srv:
            t = H1Transport()
            _, chunks = await fetch(t, srv.url)
            idle = sum(len(v) for v in t._idle.values())
            await t.aclose()
            return chunks, idle

    chunks, idle = run(go())
    assert b"".join(chunks) == b"ok" and idle == 0


def test_read_until_close_body_and_connection_close_are_not_reused():
    async def go():
        close_delimited = b"HTTP/1.1 200 OK\r\n\r\nall of it"
        async with Scripted([close_delimited], close_after=1) as a:
            t = H1Transport()
            _, chunks = await fetch(t, a.url)
            assert b"".join(chunks) == b"all of it"
            assert t._idle == {} or all(not v for v in t._idle.values())
        told = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"
        async with Scripted([told, told], close_after=1) as b:
            t = H1Transport()
            await fetch(t, b.url)
            await fetch(t, b.url)
            return b.connections

    assert run(go()) == 2


def test_interim_1xx_skipped_and_bodiless_responses():
    async def go():
        replies = [
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n",  # HEAD: no body follows
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz",
        ]
        async with Scripted(replies) as srv:
            t = H1Transport()
            out = [
                await fetch(t, srv.url),
                await fetch(t, srv.url),
                await fetch(t, srv.url, method="HEAD", body=b""),
                await fetch(t, srv.url),
            ]
            return [(r.status_code, b"".join(c)) for r, c in out], srv.connections

    results, connections = run(go())
    assert results == [(201, b"ok"), (204, b""), (200, b""), (200, b"z")]
    assert connections == 1


def test_stale_idle_connection_is_retried_once_on_a_fresh_one():
    async def go():
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        async with Scripted([ok, None, ok]) as srv:  # the 2nd request finds its connection closed
            t = H1Transport()
            await fetch(t, srv.url)
            resp, chunks = await fetch(t, srv.url)
            return resp.status_code, chunks, srv.connections

    assert run(go()) == (200, [b"ok"], 2)


def test_a_reused_connection_dropped_after_the_upstream_held_the_request_is_not_resent():
    # Before: any failure on a reused connection without a response byte was retried, so an
    # upstream that had worked on a POST for a while and then dropped it got it twice (a
    # second paid generation). Only a failure right after the send is a stale idle socket.
    async def go():
        ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        async with Scripted([ok, [(b"", 0.3)], ok], close_after=2) as srv:  # holds the 2nd, then hangs up
            t = H1Transport(stale_window_s=0.1)
            await fetch(t, srv.url)
            with pytest.raises(httpx.RemoteProtocolError):
                await fetch(t, srv.url)
            return len(srv.requests), srv.connections, t._slots._value

    assert run(go()) == (2, 1, 512)


def test_errors_are_httpx_errors():
    async def go():
        t = H1Transport()
        from tests.support.servers import free_port

        with pytest.raises(httpx.ConnectError):
            await fetch(t, f"http://127.0.0.1:{free_port()}/")
        async with Scripted([b"SPDY/9 200 nope\r\n\r\n"]) as srv:
            with pytest.raises(httpx.RemoteProtocolError):
                await fetch(t, srv.url)
        async with Scripted([[(b"HTTP/1.1 200 OK\r\n\r\n", 1.0)]]) as srv:
            with pytest.raises(httpx.ReadTimeout):
                await fetch(t, srv.url, timeout={**TIMEOUT, "read": 0.1})
        async with Scripted([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"], close_after=1) as srv:
            with pytest.raises(httpx.RemoteProtocolError):
                await fetch(t, srv.url)
        async with Scripted([b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"]) as srv:
            with pytest.raises(httpx.RemoteProtocolError):
                await fetch(t, srv.url)
        with pytest.raises(httpx.LocalProtocolError):
            await fetch(t, "http://127.0.0.1:1/", headers={"x-bad": "a\r\nInjected: 1"})
        return t._slots._value

    assert run(go()) == 512  # every failure gave its slot back


def test_closing_mid_body_closes_the_connection_and_the_server_sees_it():
    async def go():
        reply = [
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n", 0),
            (b"5\r\nlater\r\n0\r\n\r\n", 5),
        ]
        async with Scripted([reply]) as srv:
            t = H1Transport()
            req = httpx.Request("POST", srv.url, content=b"{}", extensions={"timeout": TIMEOUT})
            resp = await t.handle_async_request(req)
            it = resp.stream.__aiter__()
            assert await it.__anext__() == b"first"
            await resp.stream.aclose()
            await it.aclose()
            return t._slots._value, sum(len(v) for v in t._idle.values())

    assert run(go()) == (512, 0)


def test_pool_limit_and_pool_timeout():
    async def go():
        slow = [(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", 0), (b"x", 0.5)]
        async with Scripted([slow, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny"]) as srv:
            t = H1Transport(max_connections=1)
            first = asyncio.create_task(fetch(t, srv.url))
            await asyncio.sleep(0.1)
            with pytest.raises(httpx.PoolTimeout):
                await fetch(t, srv.url, timeout={**TIMEOUT, "pool": 0.05})
            await first
            _, chunks = await fetch(t, srv.url)
            return chunks

    assert run(go()) == [b"y"]


def test_https_verifies_certificates(tmp_path):
    import shutil
    import ssl
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl CLI not available to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)

    async def go():
        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntls")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
        url = f"https://localhost:{server.sockets[0].getsockname()[1]}/"
        try:
            with pytest.raises(httpx.ConnectError):  # self-signed: refused by the default CA bundle
                await fetch(H1Transport(), url, method="GET", body=b"")
            trusting = ssl.create_default_context(cafile=str(cert))
            resp, chunks = await fetch(H1Transport(ssl_context=trusting), url, method="GET", body=b"")
            return resp.status_code, b"".join(chunks)
        finally:
            server.close()

    assert run(go()) == (200, b"tls")


def test_a_big_body_left_unread_never_goes_back_to_the_pool_paused():
    # Reading pauses above the high-water mark; a response closed before its body was read
    # would leave the connection deaf: the next request's answer never read (a 600 s hang).
    async def go():
        big = b"x" * (300 * 1024)
        reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big
        async with Scripted([reply, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]) as srv:
            t = H1Transport()
            req = httpx.Request("GET", srv.url, extensions={"timeout": TIMEOUT})
            resp = await t.handle_async_request(req)
            await asyncio.sleep(0.3)  # the whole body arrives; nobody reads it
            await resp.stream.aclose()
            _, chunks = await fetch(t, srv.url)
            return chunks, srv.connections

    assert run(go()) == ([b"ok"], 2)


def test_an_upstream_answering_before_the_upload_ends_is_heard_at_once():
    # An early 413 while the request body is still going out: the answer is read (not a
    # 60 s write timeout), and the connection, whose request never went out whole, is closed.
    async def go():
        answered = asyncio.Event()

        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 3\r\n\r\nbig")
            await writer.drain()
            answered.set()
            await asyncio.sleep(3)  # reads nothing more: the client's send buffer fills up
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        t = H1Transport()
        loop = asyncio.get_running_loop()
        started = loop.time()
        resp, chunks = await fetch(t, url, body=b"y" * (64 * 1024 * 1024), timeout={**TIMEOUT, "write": 10.0})
        took = loop.time() - started
        server.close()
        return resp.status_code, b"".join(chunks), took < 5, sum(len(v) for v in t._idle.values())

    assert run(go()) == (413, b"big", True, 0)


def test_a_reset_connection_is_a_read_error():
    async def go():
        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            sock = writer.get_extra_info("socket")
            import socket
            import struct

            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            writer.transport.abort()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        try:
            with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
                await fetch(H1Transport(), url)
        finally:
            server.close()

    run(go())
