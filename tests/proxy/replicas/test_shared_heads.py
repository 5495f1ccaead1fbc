"""Two proxies' heads shared through a board: the same set, so the same placement; a hung board
never blocks and changes nothing."""

from __future__ import annotations

import asyncio
import time

from proxy.replicas.head_assign import HeadWindow, assign
from proxy.replicas.shared_heads import MemoryHeadBoard, SharedHeads

URLS = ["http://a:1/v1", "http://b:1/v1", "http://c:1/v1"]


def test_two_proxies_that_saw_different_apps_agree_after_sharing():
    async def main():
        board = MemoryHeadBoard()
        one, two = HeadWindow(), HeadWindow()
        for i in range(6):
            (one if i % 2 else two).touch(f"app {i}".encode() * 4)
        a, b = SharedHeads(board, one), SharedHeads(board, two)
        assert await a.refresh() and await b.refresh() and await a.refresh()
        return one, two

    one, two = asyncio.run(main())
    assert one.heads() == two.heads() and len(one) == 6
    assert assign(one.heads(), URLS) == assign(two.heads(), URLS)


def test_a_hung_board_costs_one_bounded_refresh_and_leaves_the_window_alone():
    class Hung:
        async def publish_heads(self, heads, window_s):
            await asyncio.sleep(60)

        async def read_heads(self, window_s):
            return {b"x"}

    async def main():
        window = HeadWindow()
        window.touch(b"mine")
        shared = SharedHeads(Hung(), window, timeout_s=0.05)
        began = time.perf_counter()
        ok = await shared.refresh()
        return ok, time.perf_counter() - began, window.heads(), shared.failures

    ok, took, heads, failures = asyncio.run(main())
    assert not ok and took < 1 and heads == {b"mine"} and failures == 1
