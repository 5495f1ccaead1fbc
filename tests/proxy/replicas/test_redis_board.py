"""The pool's board on a real Redis (own key prefix): in-flight counts with expiry, heads within
the window, and two proxies' shared load and heads through it."""

from __future__ import annotations

import asyncio

from proxy.replicas.head_assign import HeadWindow
from proxy.replicas.redis_board import RedisBoard
from proxy.replicas.shared_heads import SharedHeads
from proxy.replicas.shared_load import SharedLoad


def test_counts_and_heads_round_trip_and_expire(redis_url):
    url, prefix = redis_url

    async def main():
        board = RedisBoard(f"{url}?key_prefix={prefix}", "pool")
        try:
            await board.publish("p1", {"http://a/v1": 3}, 0.2)
            await board.publish("p2", {"http://a/v1": 1, "http://b/v1": 2}, 5.0)
            both = await board.read()
            await asyncio.sleep(0.3)
            later = await board.read()
            await board.publish_heads({b"\x01" * 16: 1e12, b"\x02" * 16: 1.0}, 60.0)
            heads = await board.read_heads(60.0)
        finally:
            await board.aclose()
        return board, both, later, heads

    board, both, later, heads = asyncio.run(main())
    assert both == {"p1": {"http://a/v1": 3}, "p2": {"http://a/v1": 1, "http://b/v1": 2}}
    assert later == {"p2": {"http://a/v1": 1, "http://b/v1": 2}}  # p1's row expired
    assert heads == {b"\x01" * 16}  # the other was last seen long before the window
    assert board.load_key.startswith(prefix) and "{replicas:pool}" in board.heads_key


def test_two_proxies_share_load_and_heads_through_redis(redis_url):
    url, prefix = redis_url

    async def main():
        boards = [RedisBoard(f"{url}?key_prefix={prefix}", "pool") for _ in range(2)]
        windows = [HeadWindow(), HeadWindow()]
        windows[0].touch(b"A" * 16)
        windows[1].touch(b"B" * 16)
        loads = [
            SharedLoad(boards[0], "one", lambda: {"http://a/v1": 4}),
            SharedLoad(boards[1], "two", lambda: {"http://a/v1": 1}),
        ]
        heads = [SharedHeads(b, w) for b, w in zip(boards, windows)]
        try:
            for _ in range(2):
                for part in (*loads, *heads):
                    assert await part.refresh()
        finally:
            for b in boards:
                await b.aclose()
        return loads, windows

    loads, windows = asyncio.run(main())
    assert loads[0].others() == {"http://a/v1": 1} and loads[1].others() == {"http://a/v1": 4}
    assert windows[0].heads() == windows[1].heads() == {b"A" * 16, b"B" * 16}
