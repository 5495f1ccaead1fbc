"""Prefix stores for the look-up tests, under the proxy's store interface
(:class:`proxy.store.base.PrefixStore`): :class:`UpstreamFirst` answers only once the test says
the upstream was asked."""

from __future__ import annotations

import asyncio

from proxy.store.base import PrefixStore


class UpstreamFirst(PrefixStore):
    """A remote-like store (no ``seen_sync``: the handler runs it as a task) whose answer waits
    until the upstream was asked; ``fail`` makes it raise instead of answering."""

    def __init__(self, answer: int = 1, fail: bool = False) -> None:
        self.answer, self.fail = answer, fail
        self.asked = asyncio.Event()  # bound to the app's loop on first use
        self.steps: list[str] = []

    def ready(self, tenant=None) -> bool:
        return True

    async def seen(self, tenant, provider, hashes):
        self.steps.append("look-up asked")
        try:
            await self.asked.wait()
        except asyncio.CancelledError:
            self.steps.append("look-up cancelled")
            raise
        self.steps.append("look-up answered")
        if self.fail:
            raise RuntimeError("store broke")
        return self.answer

    async def aclose(self) -> None:
        return None
