"""The circuit breakers of a store's scopes (:class:`ScopeBreakers`): the whole store's, and
one per scope (a Redis Cluster node, a slot without one) that failed.

A scope gets a breaker when it fails and loses it when a probe closes it or the store no longer
maps it, so the breakers stay as few as the failing scopes; choosing a scope never awaits.

It moves no breaker and does no I/O: :mod:`proxy.store.guard` and :mod:`proxy.store.probes`
drive them. See docs/store.md.
"""

from __future__ import annotations

from collections.abc import Hashable

from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker

MAX_SCOPES_SHOWN = 64

#: a store scope; None is the whole store
Scope = Hashable


def scope_name(scope: Scope) -> str:
    return "store" if scope is None else str(scope)


class ScopeBreakers:
    def __init__(self, inner: PrefixStore, whole: Breaker) -> None:
        self.inner = inner
        self.whole = whole
        self.breakers: dict[Scope, Breaker] = {None: whole}
        self._scope_of = inner.scope if inner.scoped else None

    @property
    def scoped(self) -> bool:
        return self._scope_of is not None

    def scope_of(self, tenant: str | None) -> Scope:
        """The scope a tenant's look-up falls in; None, the whole store, also while the store's
        map is being rebuilt (its scope cannot be told)."""
        if self._scope_of is None or tenant is None:
            return None
        try:
            return self._scope_of(tenant)
        except Exception:
            return None

    def get(self, scope: Scope) -> Breaker | None:
        """``scope``'s breaker; None for a scope that never failed (closed)."""
        return self.breakers.get(scope)

    def breaker_for(self, scope: Scope) -> Breaker:
        """``scope``'s breaker: a new closed one, with the whole store's settings, if it has none."""
        b = self.breakers.get(scope)
        if b is None:
            b = self.breakers[scope] = self.whole.sibling()
        return b

    def closed(self, scope: Scope, b: Breaker) -> None:
        """A probe closed ``b``: a scope that does not fail needs no breaker (the map stays bounded)."""
        if scope is not None and self.breakers.get(scope) is b:
            del self.breakers[scope]

    def opened(self) -> dict[Scope, Breaker]:
        return {s: b for s, b in self.breakers.items() if not b.allow()}

    def known(self) -> set[Scope]:
        """The scopes the store maps now (none while it cannot say)."""
        try:
            return set(self.inner.scopes())
        except Exception:
            return set()

    def forget_stale(self) -> None:
        """Drop the breakers of scopes the store no longer maps (a slot served again, a node gone)."""
        for scope in [s for s in self.breakers if s is not None]:
            if not self.breakers[scope].probing and self.inner.stale(scope):
                del self.breakers[scope]

    def to_check(self) -> set[Scope]:
        """The scopes health checks: every one with a breaker and every one the store maps; the
        whole store's then only while it is open (only look-ups without a tenant use it)."""
        self.forget_stale()
        scopes = set(self.breakers)
        if self._scope_of is not None:
            known = self.known()
            if known:
                scopes |= known
                if self.whole.allow():
                    scopes.discard(None)
        return scopes

    def to_json(self, checked: set[Scope], opened: dict[Scope, Breaker]) -> dict:
        """Health's ``scopes``: how many, how many open, and each one's state (open ones first,
        at most :data:`MAX_SCOPES_SHOWN`)."""
        every = checked | set(opened)
        states = sorted(
            ((scope_name(s), self.breakers[s].state if s in self.breakers else "closed") for s in every),
            key=lambda item: (item[1] == "closed", item[0]),
        )
        return {"total": len(every), "open": len(opened), "states": dict(states[:MAX_SCOPES_SHOWN])}
