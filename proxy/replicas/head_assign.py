"""Where each app's head lives: a bounded-load assignment of the recently active heads to replicas.

:func:`assign` gives each head (the routing key of an app-sized head, :func:`.routing_key.route_of`)
the first replica in its own rendezvous order with room (an even share of the heads, ``slack``
more at most), taking the heads in the order of their hashes: a pure function of the SET of heads and the
replicas, so two proxies that saw the same apps agree without talking, and no replica keeps more
than its share of apps. :class:`HeadWindow` is that set: the heads seen in the last ``window_s``
(at most ``max_heads``), this proxy's and the others' (:mod:`.shared_heads`). Load and health are
the caller's (:mod:`.replica_set`). Why: docs/several-engines.md.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence

from proxy.replicas.rendezvous import ranked

WINDOW_S = 600.0  # a head unseen this long leaves the set (its engine cache is cold by then anyway)
MAX_HEADS = 1024
SLACK = 0  # heads a replica may hold beyond its even share


def assign(heads: Iterable[bytes], replicas: Sequence[str], slack: int = SLACK) -> dict[bytes, str]:
    """head → replica: each head, in hash order, to the first replica of its rendezvous order
    with room. With ``H`` heads over ``n`` replicas a replica holds ``H // n`` heads, or one more
    while fewer than ``H % n`` replicas do (the counts differ by one at most), plus ``slack``."""
    order = sorted(set(heads))
    if not replicas or not order:
        return {}
    low, extra = divmod(len(order), len(replicas))
    held = dict.fromkeys(replicas, 0)
    fuller = 0  # replicas holding low + 1
    out: dict[bytes, str] = {}
    for head in order:
        for replica in ranked(head, replicas):
            room = low + slack + (1 if fuller < extra or held[replica] > low else 0)
            if held[replica] < room:
                fuller += held[replica] == low
                held[replica] += 1
                out[head] = replica
                break
    return out


class HeadWindow:
    """The heads seen lately: this proxy's (each with its last sighting, unix seconds) and the
    other proxies' last shared set. ``version`` moves whenever the set does (a new head, one
    expired or dropped, the others' changed), so an assignment can be kept until then."""

    def __init__(
        self, window_s: float = WINDOW_S, max_heads: int = MAX_HEADS, clock: Callable[[], float] = time.time
    ) -> None:
        if window_s <= 0 or max_heads < 1:
            raise ValueError("window_s must be positive and max_heads at least 1")
        self.window_s, self.max_heads, self._clock = window_s, max_heads, clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()  # oldest sighting first
        self._others: frozenset[bytes] = frozenset()
        self.version = 0

    def touch(self, head: bytes) -> None:
        """A request with this head arrived."""
        now = self._clock()
        if head in self._seen:
            self._seen.move_to_end(head)
        elif head not in self._others:
            self.version += 1
        self._seen[head] = now
        while len(self._seen) > self.max_heads:
            self._seen.popitem(last=False)
            self.version += 1
        self.expire(now)

    def expire(self, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        while self._seen:
            head, at = next(iter(self._seen.items()))
            if now - at <= self.window_s:
                break
            del self._seen[head]
            if head not in self._others:
                self.version += 1

    def local(self) -> Mapping[bytes, float]:
        """This proxy's heads and when each was last seen (what it shares)."""
        return self._seen

    def merge(self, others: Iterable[bytes]) -> None:
        """The other proxies' heads at the last shared read (they replace the previous set)."""
        others = frozenset(others)
        if others != self._others:
            if others.symmetric_difference(self._others) - self._seen.keys():
                self.version += 1
            self._others = others

    def heads(self) -> set[bytes]:
        return set(self._seen) | self._others

    def __len__(self) -> int:
        return len(self.heads())
