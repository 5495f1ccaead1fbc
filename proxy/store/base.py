"""What every prefix store answers: :class:`PrefixStore`.

This module holds the interface only; the stores are :mod:`proxy.store.memory` and
:mod:`proxy.store.redis_store`, the guard :mod:`proxy.store.guard`.
"""

from __future__ import annotations

from typing import Protocol, Sequence


class PrefixStore(Protocol):
    def ready(self, tenant: str | None = None) -> bool: ...  # False: skip the store for this tenant now, awaiting nothing

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None: ...  # None: unknown

    async def aclose(self) -> None: ...
