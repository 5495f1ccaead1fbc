"""The replicas of one upstream: which one takes a request, and the books on each send.

:meth:`ReplicaSet.pick` chooses among the replicas in rotation with the pool's policy
(:mod:`.load_share`), loads being this proxy's in flight plus the others' (:mod:`.shared_load`);
with active checks off, an out-of-rotation replica whose backoff passed gets one live request as
its probe. Every send is a :class:`Ticket`: :meth:`answered` at the head, then exactly one of
:meth:`failed` (which says whether to retry, :mod:`.retry_rule`) or :meth:`done`. No replica in
rotation is a :class:`Pick` without one (reason ``none-healthy``). An app's head goes where
:mod:`.head_assign` placed it, under the prefix policy. It sends nothing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from proxy.config import check_base_urls
from proxy.replicas.head_assign import HeadWindow, assign
from proxy.replicas.health import HealthPolicy, ReplicaHealth
from proxy.replicas.load_share import BALANCE_ABS, DEFAULT_EPSILON, PREFIX, Chooser, bounded
from proxy.replicas.rendezvous import ranked
from proxy.replicas.replica_stats import ReplicaStats
from proxy.replicas.retry_rule import LOCAL, NextStep, after_failure, status_fails
from proxy.replicas.shared_load import SharedLoad

NONE_HEALTHY = "none-healthy"
TRIAL = "trial"


@dataclass(eq=False)
class Replica:
    url: str  # the base URL, normalised: also its id in rendezvous hashing
    health: ReplicaHealth
    stats: ReplicaStats = field(default_factory=ReplicaStats)


@dataclass(frozen=True, slots=True)
class Pick:
    replica: Replica | None  # None: no replica in rotation
    rank: int  # its place in the key's rendezvous order over the candidates (0: the first)
    reason: str  # home | spill | least-loaded | round-robin | trial | none-healthy


@dataclass(eq=False, slots=True)
class Ticket:
    replica: Replica
    attempt: int  # 1 for the first send, 2 for the one retry
    trial: bool
    open: bool = True
    failing: bool = False  # it answered a failing status (a 5xx)


def normalised_urls(urls: Sequence[str], what: str = "base_urls") -> tuple[str, ...]:
    """The URLs checked and without a trailing ``/``; ValueError on an empty list or a duplicate
    (:func:`proxy.config.check_base_urls`)."""
    return check_base_urls(
        list(urls) if isinstance(urls, Sequence) and not isinstance(urls, str) else urls, what
    )


class ReplicaSet:
    def __init__(
        self,
        urls: Sequence[str],
        policy: str = PREFIX,
        epsilon: float = DEFAULT_EPSILON,
        health: HealthPolicy | None = None,
        shared: SharedLoad | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
        heads: HeadWindow | None = None,
        slack: int = BALANCE_ABS,
    ) -> None:
        self.health_policy = health or HealthPolicy()
        self.heads = heads if heads is not None else HeadWindow()
        self._placed: tuple[tuple, dict[bytes, str]] = ((), {})
        self.chooser = Chooser(policy, epsilon, slack)
        self.replicas = tuple(
            Replica(url, ReplicaHealth(self.health_policy, clock, rng)) for url in normalised_urls(urls)
        )
        self._by_url = {r.url: r for r in self.replicas}
        self.shared = shared
        self.none_healthy = 0  # picks that found no replica in rotation

    @property
    def policy(self) -> str:
        return self.chooser.policy

    def local_load(self) -> dict[str, int]:
        return {r.url: r.stats.in_flight for r in self.replicas}

    def loads(self) -> dict[str, int]:
        """In flight per replica: this proxy's, plus the other proxies' last shared counts."""
        load = self.local_load()
        if self.shared is not None:
            for url, n in self.shared.others().items():
                if url in load:
                    load[url] += n
        return load

    def placement(self, healthy: Sequence[str]) -> dict[bytes, str]:
        """The heads' assignment over ``healthy`` (:func:`.head_assign.assign`), kept until the set
        of heads or of replicas moves."""
        stamp = (self.heads.version, tuple(healthy))
        if self._placed[0] != stamp:
            self._placed = (stamp, assign(self.heads.heads(), healthy))
        return self._placed[1]

    def pick(self, key: bytes | None, exclude: Collection[str] = (), *, head: bool = False) -> Pick:
        """The replica for a request routed by ``key`` (None: no key), never one in ``exclude``
        (a retry's: it never goes to a replica out of rotation as its probe). ``head``: the key is
        an app's head, placed by :meth:`placement` under the prefix policy, then bounded by load."""
        if head and key is not None and self.policy == PREFIX:
            self.heads.touch(key)
        if self.health_policy.check_interval_s is None and not exclude:
            for r in self.replicas:
                if r.url not in exclude and not r.health.in_rotation and r.health.try_probe():
                    return Pick(r, -1, TRIAL)
        healthy = [r.url for r in self.replicas if r.health.in_rotation and r.url not in exclude]
        if not healthy:
            self.none_healthy += 1
            return Pick(None, -1, NONE_HEALTHY)
        if head and key is not None and self.policy == PREFIX:
            return self._pick_head(key, healthy, exclude)
        url, rank, reason = self.chooser.choose(key, healthy, self.loads())
        return Pick(self._by_url[url], rank, reason)

    def _pick_head(self, key: bytes, healthy: list[str], exclude: Collection[str]) -> Pick:
        """The head's assigned replica first, then the rest in its rendezvous order, bounded by load."""
        rotation = [r.url for r in self.replicas if r.health.in_rotation]
        home = self.placement(rotation).get(key)
        order = [home] if home in healthy else []
        order += [u for u in ranked(key, healthy) if u != home]
        i = bounded(order, self.loads(), self.chooser.epsilon, self.chooser.slack)
        return Pick(self._by_url[order[i]], i, "home" if i == 0 else "spill")

    def start(self, pick: Pick, attempt: int = 1) -> Ticket:
        """A send to the picked replica begins (it counts as in flight until the ticket closes)."""
        if pick.replica is None:
            raise ValueError("no replica was picked")
        trial = pick.reason == TRIAL
        pick.replica.stats.started(spilled=pick.reason == "spill", trial=trial)
        return Ticket(pick.replica, attempt, trial)

    def answered(self, ticket: Ticket, status: int) -> None:
        """The replica's status line came in: a 5xx is a passive failure, any other a success."""
        ticket.failing = status_fails(status)
        self._health(ticket, not ticket.failing, f"status {status}")

    def failed(self, ticket: Ticket, phase: str, error: str) -> NextStep:
        """The send failed at ``phase`` (:func:`.retry_rule.phase_of`); closes the ticket and says
        whether the request goes to another replica (then :meth:`pick` with ``exclude``)."""
        others = any(r.health.in_rotation for r in self.replicas if r is not ticket.replica)
        step = after_failure(phase, ticket.attempt, others)
        if step.counts_against_replica:
            self._health(ticket, False, error)
        elif ticket.trial and phase == LOCAL:
            ticket.replica.health.probe_done(False, error)
        self._close(ticket, error=True, retried=step.retry)
        return step

    def done(
        self,
        ticket: Ticket,
        prompt_tokens: int | None = None,
        cached_tokens: int | None = None,
        *,
        error: str | None = None,
    ) -> None:
        """The exchange ended (``error``: its answer broke off or failed); closes the ticket."""
        if error is not None:
            self._health(ticket, False, error)
        self._close(ticket, error=error is not None, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens)

    def _health(self, ticket: Ticket, ok: bool, error: str) -> None:
        health = ticket.replica.health
        if ticket.trial:
            ticket.trial = False  # one probe outcome per trial
            health.probe_done(ok, None if ok else error)
        elif ok:
            health.success()
        else:
            health.failure(error)

    def _close(self, ticket: Ticket, *, error: bool, retried: bool = False, **tokens) -> None:
        if not ticket.open:
            return
        ticket.open = False
        ticket.replica.stats.ended(
            error=error or ticket.failing,
            retried=retried,
            prompt_tokens=tokens.get("prompt_tokens") or 0,
            cached_tokens=tokens.get("cached_tokens") or 0,
        )

    def snapshot(self) -> dict:
        """The pool for ``/prefixgate/stats``: its policy and, per replica, counters and health."""
        placed = list(self._placed[1].values())
        return {
            "routing": self.policy,
            "epsilon": self.chooser.epsilon,
            "none_healthy": self.none_healthy,
            "heads": len(self.heads),
            "replicas": [
                {
                    "url": r.url,
                    **r.stats.snapshot(),
                    "heads": placed.count(r.url),
                    "health": r.health.to_json(),
                }
                for r in self.replicas
            ],
        }
