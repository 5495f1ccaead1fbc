"""The bench's keep-alive load client against tiny real servers on loopback."""

from __future__ import annotations

import asyncio

from proxy.bench.http import Pool, build_request, run_load
from proxy.emulator import create_app
from tests.support.servers import serve

REPLY = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"


async def _one_shot_server(handler) -> tuple[asyncio.AbstractServer, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    await reader.readexactly(length)


def test_connection_closed_while_idle_is_replaced_not_counted():
    async def close_after_one(reader, writer):
        await _read_request(reader)
        writer.write(REPLY)
        await writer.drain()
        writer.close()  # like a keep-alive timeout: the next request finds the socket closed

    async def main():
        server, port = await _one_shot_server(close_after_one)
        pool = Pool("127.0.0.1", port)
        result = await run_load(pool, lambda i: build_request("127.0.0.1", port, "/x", b"{}", {}), 3, 1)
        await pool.aclose()
        server.close()
        return result

    result = asyncio.run(main())
    assert (len(result.ok()), result.errors) == (3, 0)


def test_response_cut_mid_body_is_an_error():
    async def cut(reader, writer):
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nhalf")
        await writer.drain()
        writer.close()

    async def main():
        server, port = await _one_shot_server(cut)
        pool = Pool("127.0.0.1", port)
        result = await run_load(pool, lambda i: build_request("127.0.0.1", port, "/x", b"{}", {}), 2, 1)
        await pool.aclose()
        server.close()
        return result

    result = asyncio.run(main())
    assert result.errors == 2 and result.ok() == []


def test_chunked_stream_from_the_emulator_gives_ttfb_before_total():
    with serve(create_app()) as url:
        port = int(url.rsplit(":", 1)[1])
        body = b'{"model":"m","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}'

        async def main():
            pool = Pool("127.0.0.1", port)
            make = lambda i: build_request(
                "127.0.0.1",
                port,
                "/v1/chat/completions",
                body,
                {"x-emulator-hold": f"t{i}"} if i == 0 else {},
            )
            task = asyncio.create_task(run_load(pool, make, 1, 1))
            await asyncio.sleep(0.2)  # the stream is held after its first event
            await asyncio.to_thread(_release, url, "t0")
            result = await task
            await pool.aclose()
            return result

        result = asyncio.run(main())
    sample = result.ok()[0]
    assert result.errors == 0 and sample.status == 200
    assert sample.total_s - sample.ttfb_s >= 0.15


def _release(url: str, token: str) -> None:
    import httpx

    httpx.post(f"{url}/_emulator/release/{token}")
