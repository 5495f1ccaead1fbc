"""What every prefix store answers: :class:`PrefixStore`, the interface and its defaults.

Every store answers :meth:`~PrefixStore.seen` and :meth:`~PrefixStore.aclose`; the
optional features (``waits``, warm-up, health, recovery, scopes, …) are declared here with
what a store without them answers, so callers call them directly and never probe.

It implements no store: those are :mod:`proxy.store.memory` and
:mod:`proxy.store.redis_store`, the guard :mod:`proxy.store.guard`. See docs/store.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence


class PrefixStore:
    #: False: :meth:`seen_sync` answers at once (the memory store): no task, no deadline
    waits: bool = True
    #: True: look-ups go to different servers (a Redis Cluster), one scope per server
    scoped: bool = False
    #: set by the guard; called when the server lost its data
    on_lost_data: Callable[[], None] | None = None
    #: a remote store's read-ahead at start (a Cluster's slot map); None: nothing to read ahead
    warm: Callable[[], Awaitable[None]] | None = None
    #: :meth:`hold_until`'s work, on a store that cannot be held
    _background: asyncio.Task | None = None

    def ready(self, tenant: str | None = None) -> bool:
        """False: skip the store for this tenant now, awaiting nothing."""
        return True

    async def seen(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None:
        """How many leading ``hashes`` were seen before (recording them all); None: unknown."""
        raise NotImplementedError

    def seen_sync(self, tenant: str, provider: str, hashes: Sequence[bytes]) -> int | None:
        """:meth:`seen` without waiting: only on a store whose ``waits`` is False."""
        raise NotImplementedError(f"{type(self).__name__} waits: ask seen()")

    async def aclose(self) -> None:
        if self._background is not None:
            self._background.cancel()

    def warm_up(self) -> asyncio.Task | None:
        """Start reading ahead, in the background, what the first look-ups would wait for;
        None: nothing to warm."""
        return None

    async def health(self) -> dict | None:
        """The store's state for ``/prefixgate/health``; None: nothing to show."""
        return None

    def on_recovery(self, work: Callable[[], Awaitable[object]]) -> None:
        """Run ``work()`` whenever the store comes back; a store that never goes away never does."""

    def hold_until(self, work: Callable[[], Awaitable[object]], cause: str) -> None:
        """Skip the store until ``work()`` ends. A store with nothing to hold runs ``work()`` in
        the background and stays ready; :meth:`aclose` cancels it. Needs a running loop."""
        self._background = asyncio.get_running_loop().create_task(work())

    def scope(self, tenant: str) -> Hashable:
        """The scope of ``tenant``'s look-up (only when ``scoped``); None: the whole store."""
        return None

    def scopes(self) -> Iterable[Hashable]:
        """The scopes health checks (none known: only those that failed)."""
        return ()

    def stale(self, scope: Hashable) -> bool:
        """True for a scope that no longer maps anything (its breaker can go)."""
        return False

    def recovers(self, scope: Hashable) -> bool:
        """Whether ``scope``'s return needs the recovery work."""
        return True

    async def ping(self, scope: Hashable = None) -> bool:
        """A cheap round trip (``scope`` only when ``scoped``); a store with nothing cheaper to
        ask answers True: the next real look-up decides."""
        return True
