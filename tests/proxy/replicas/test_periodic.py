"""The replicas' background loop: a failing round is counted and the loop goes on."""

from __future__ import annotations

import asyncio

from proxy.replicas.periodic import Periodic


class Flaky(Periodic):
    def __init__(self) -> None:
        self.rounds = 0

    async def tick(self) -> None:
        self.rounds += 1
        if self.rounds % 2:
            raise RuntimeError("a bad round")

    def period_s(self) -> float:
        return 0.001


def test_a_round_that_raises_never_stops_the_loop():
    async def main() -> Flaky:
        loop = Flaky()
        loop.start()
        for _ in range(1000):
            if loop.rounds >= 6:
                break
            await asyncio.sleep(0.005)
        await loop.aclose()
        return loop

    loop = asyncio.run(main())
    assert loop.rounds >= 6 and loop.tick_errors >= 3
    assert loop._task is None
