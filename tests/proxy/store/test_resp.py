"""proxy.store.resp: RESP framing, and a pool that reuses a connection only after a whole
reply. Against a tiny fake server on loopback (scripted replies), never a real Redis."""

from __future__ import annotations

import asyncio

import pytest

from proxy.store.resp import RespError, RespPool, pack, read_reply


def test_pack_is_an_array_of_bulk_strings():
    assert pack([b"PING"]) == b"*1\r\n$4\r\nPING\r\n"
    assert (
        pack([b"EVALSHA", b"ab", b"1", b"k\r\n", b""])
        == b"*5\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$3\r\nk\r\n\r\n$0\r\n\r\n"
    )


@pytest.mark.parametrize(
    "wire, value",
    [
        (b":42\r\n", 42),
        (b":-1\r\n", -1),
        (b"+PONG\r\n", b"PONG"),
        (b"$3\r\na\r\n\r\n", b"a\r\n"),
        (b"$-1\r\n", None),
        (b"*2\r\n:1\r\n$1\r\nx\r\n", [1, b"x"]),
        (b"*-1\r\n", None),
    ],
)
def test_read_reply_kinds(wire, value):
    async def read():
        reader = asyncio.StreamReader()
        reader.feed_data(wire)
        return await read_reply(reader)

    assert asyncio.run(read()) == value


def test_an_error_reply_is_returned_and_garbage_is_a_connection_error():
    async def read(wire: bytes):
        reader = asyncio.StreamReader()
        reader.feed_data(wire)
        return await read_reply(reader)

    err = asyncio.run(read(b"-NOSCRIPT No matching script\r\n"))
    assert isinstance(err, RespError) and str(err).startswith("NOSCRIPT")
    with pytest.raises(ConnectionError):
        asyncio.run(read(b"HTTP/1.1 200 OK\r\n"))


class FakeRedis:
    """Answers each command line by line from ``script`` (a function of the command's first
    word → reply bytes, or None to never answer). Counts connections and commands."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.connections = 0
        self.commands: list[list[bytes]] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                command = await read_reply(reader)  # a client's command is an array of bulk strings
                self.commands.append(command)
                reply = self.answer(command)
                if reply is None:
                    await asyncio.Event().wait()
                writer.write(reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def __aenter__(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        for writer in self.writers:
            writer.close()
        self.server.close()


def by_name(command: list[bytes]) -> bytes | None:
    name = command[0]
    if name == b"PING":
        return b"+PONG\r\n"
    if name == b"SLOW":
        return None
    if name == b"BAD":
        return b"-ERR unknown command\r\n"
    return b":%d\r\n" % len(command)


def test_one_connection_is_reused_across_calls_and_error_replies():
    async def scenario():
        async with FakeRedis(by_name) as fake:
            pool = RespPool("127.0.0.1", fake.port)
            got = [await pool.call(pack([b"PING"])), await pool.call(pack([b"X", b"a", b"b"]))]
            with pytest.raises(RespError, match="unknown command"):
                await pool.call(pack([b"BAD"]))
            got.append(await pool.call(pack([b"PING"])))
            await pool.aclose()
            return got, fake.connections, pool.idle

    assert asyncio.run(scenario()) == ([b"PONG", 3, b"PONG"], 1, 0)


def test_a_command_cancelled_mid_reply_closes_its_connection():
    async def scenario():
        async with FakeRedis(by_name) as fake:
            pool = RespPool("127.0.0.1", fake.port)
            assert await pool.call(pack([b"PING"])) == b"PONG"
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await pool.call(pack([b"SLOW"]))
            after_cancel = pool.idle
            answer = await pool.call(pack([b"Y", b"1"]))  # a new connection: never the slow command's reply
            await pool.aclose()
            return after_cancel, answer, fake.connections

    assert asyncio.run(scenario()) == (0, 2, 2)


def test_connections_a_restarted_server_closed_are_skipped_not_failed_on():
    async def scenario():
        async with FakeRedis(by_name) as fake:
            pool = RespPool("127.0.0.1", fake.port)
            await asyncio.gather(*(pool.call(pack([b"PING"])) for _ in range(3)))
            idle = pool.idle
            for writer in fake.writers:  # the server goes away and comes back: every old connection is closed
                writer.close()
            await asyncio.sleep(0.05)
            answer = await pool.call(pack([b"PING"]))
            await pool.aclose()
            return idle, answer, fake.connections

    idle, answer, connections = asyncio.run(scenario())
    assert idle == 3 and answer == b"PONG" and connections == 4


def test_auth_and_select_on_connect_and_a_refused_auth_is_a_connection_error():
    def answer(command):
        if command[0] == b"AUTH":
            return b"+OK\r\n" if command[-1] == b"right" else b"-WRONGPASS invalid username-password pair\r\n"
        return by_name(command)

    async def scenario():
        async with FakeRedis(answer) as fake:
            good = RespPool("127.0.0.1", fake.port, db=3, username="u", password="right")
            assert await good.call(pack([b"PING"])) == b"PONG"
            bad = RespPool("127.0.0.1", fake.port, password="wrong")
            with pytest.raises(ConnectionError, match="refused AUTH"):
                await bad.call(pack([b"PING"]))
            await good.aclose()
            await bad.aclose()
            return fake.commands

    commands = asyncio.run(scenario())
    assert commands[:3] == [[b"AUTH", b"u", b"right"], [b"SELECT", b"3"], [b"PING"]]
    assert commands[3] == [b"AUTH", b"wrong"] and len(commands) == 4  # no command after a refused AUTH


def test_a_server_that_is_gone_is_a_connection_error_and_a_closed_pool_refuses():
    async def scenario():
        async with FakeRedis(by_name) as fake:
            port = fake.port
        pool = RespPool("127.0.0.1", port, connect_timeout_s=1.0)
        with pytest.raises(OSError):
            await pool.call(pack([b"PING"]))
        await pool.aclose()
        with pytest.raises(ConnectionError, match="closed"):
            await pool.call(pack([b"PING"]))

    asyncio.run(scenario())
