"""proxy.store.scopes: one breaker per failing scope, dropped when closed or no longer mapped."""

from __future__ import annotations

from proxy.store.base import PrefixStore
from proxy.store.breaker import Breaker
from proxy.store.scopes import MAX_SCOPES_SHOWN, ScopeBreakers, scope_name


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


class Mapped(PrefixStore):
    """A scoped store whose map the test sets: tenant → node; ``broken`` while rebuilt."""

    scoped = True

    def __init__(self) -> None:
        self.nodes = {"a": "n1:1", "b": "n2:2"}
        self.broken = False

    def scope(self, tenant):
        if self.broken:
            raise KeyError(tenant)
        return self.nodes[tenant]

    def scopes(self):
        if self.broken:
            raise RuntimeError("map being rebuilt")
        return sorted(set(self.nodes.values()))

    def stale(self, scope):
        return scope not in self.nodes.values()


def test_a_scope_gets_a_breaker_only_once_it_fails_and_loses_it_when_a_probe_closes_it():
    store = Mapped()
    scopes = ScopeBreakers(store, Breaker(clock=Clock(), jitter=0.0))
    assert scopes.scope_of("a") == "n1:1" and scopes.get("n1:1") is None
    b = scopes.breaker_for("n1:1")
    assert b is not scopes.whole and scopes.breaker_for("n1:1") is b
    assert b.backoff.first_s == scopes.whole.backoff.first_s and b.state == "closed"
    b.failure("ConnectionError")
    assert set(scopes.opened()) == {"n1:1"}
    scopes.closed("n1:1", Breaker())
    assert "n1:1" in scopes.breakers
    scopes.closed("n1:1", b)
    assert "n1:1" not in scopes.breakers
    scopes.closed(None, scopes.whole)
    assert scopes.breakers == {None: scopes.whole}


def test_an_unscoped_store_and_a_map_being_rebuilt_fall_back_to_the_whole_store():
    assert ScopeBreakers(PrefixStore(), Breaker()).scope_of("a") is None
    store = Mapped()
    scopes = ScopeBreakers(store, Breaker())
    assert scopes.scoped and scopes.scope_of(None) is None
    store.broken = True
    assert scopes.scope_of("a") is None and scopes.known() == set()


def test_stale_scopes_are_forgotten_unless_a_probe_is_in_flight():
    store = Mapped()
    scopes = ScopeBreakers(store, Breaker(clock=Clock(), jitter=0.0))
    for scope in ("n1:1", "gone:9", "probing:8"):
        scopes.breaker_for(scope).failure("TimeoutError")
    scopes.breakers["probing:8"].probing = True
    scopes.forget_stale()
    assert set(scopes.breakers) == {None, "n1:1", "probing:8"}


def test_health_checks_every_mapped_scope_and_the_whole_store_only_while_it_is_open():
    store = Mapped()
    scopes = ScopeBreakers(store, Breaker(clock=Clock(), jitter=0.0))
    assert scopes.to_check() == {"n1:1", "n2:2"}
    scopes.whole.failure("ConnectionError")
    assert scopes.to_check() == {None, "n1:1", "n2:2"}
    assert ScopeBreakers(PrefixStore(), Breaker()).to_check() == {None}


def test_health_json_lists_open_scopes_first_and_bounds_the_list():
    store = Mapped()
    store.nodes = {f"t{i}": f"n{i:03}:1" for i in range(MAX_SCOPES_SHOWN + 10)}
    scopes = ScopeBreakers(store, Breaker(clock=Clock(), jitter=0.0))
    scopes.breaker_for("n070:1").failure("TimeoutError")
    checked = scopes.to_check()
    shown = scopes.to_json(checked, scopes.opened())
    assert shown["total"] == MAX_SCOPES_SHOWN + 10 and shown["open"] == 1
    assert len(shown["states"]) == MAX_SCOPES_SHOWN
    assert next(iter(shown["states"].items())) == ("n070:1", "open")
    assert scope_name(None) == "store" and scope_name("n1:1") == "n1:1"
