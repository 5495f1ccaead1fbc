"""The routing policies over the healthy replicas: ``prefix`` (rendezvous order with bounded
loads), ``least-loaded`` and ``round-robin``.

Bounded load (consistent hashing with bounded loads): with ``L`` requests in flight over ``n``
healthy replicas, this one counted, the mean is ``(L + 1) / n`` and a replica takes the request
only while it would then hold at most ``ceil((1 + ε) × mean)`` or at most ``slack`` more than the
least loaded; else the next in the key's rendezvous order is asked. The least loaded replica
always fits, so a choice always exists.
It does not know health or count requests (see :mod:`.replica_set`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from proxy.replicas.rendezvous import ranked

PREFIX = "prefix"
LEAST_LOADED = "least-loaded"
ROUND_ROBIN = "round-robin"
POLICIES = (PREFIX, LEAST_LOADED, ROUND_ROBIN)
DEFAULT_EPSILON = (
    1.0  # bench route --fake: 0.25 spilled cached requests into misses (docs/several-engines.md)
)
#: in-flight requests a replica may hold beyond the least loaded before it counts as over the bound
#: (SGLang's router has such an absolute threshold, 32 by default): an engine batches, and a spill
#: to a cold cache costs more than a short queue (docs/several-engines.md)
BALANCE_ABS = 16


def bound(loads: Sequence[int], epsilon: float) -> int:
    """The most requests a replica may hold after taking this one: ``ceil((1 + ε) × mean)``."""
    mean = (sum(loads) + 1) / len(loads)
    return math.ceil(round((1 + epsilon) * mean, 9))


def bounded(order: Sequence[str], load: Mapping[str, int], epsilon: float, slack: int = 0) -> int:
    """The index in ``order`` (a key's rendezvous order) of the first replica within the bound:
    it would then hold at most ``ceil((1 + ε) × mean)``, or at most ``slack`` more than the least
    loaded (an absolute threshold, as SGLang's router has: small counts are no imbalance)."""
    cap = bound([load.get(r, 0) for r in order], epsilon)
    least = min(load.get(r, 0) for r in order)
    for i, r in enumerate(order):
        n = load.get(r, 0) + 1
        if n <= cap or n - least <= slack:
            return i
    return min(range(len(order)), key=lambda i: load.get(order[i], 0))  # unreachable: the least loaded fits


class Chooser:
    """One policy's choice among the healthy replicas: (replica, rank in the key's order, reason).

    ``reason``: ``home`` (the key's first replica), ``spill`` (a later one, the bound moved it),
    ``least-loaded`` (that policy, or ``prefix`` for a request without a key), ``round-robin``."""

    def __init__(self, policy: str = PREFIX, epsilon: float = DEFAULT_EPSILON, slack: int = 0) -> None:
        if policy not in POLICIES:
            raise ValueError(f"routing must be one of {', '.join(POLICIES)}, got {policy!r}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon <= 10:
            raise ValueError(f"the load bound's epsilon must be a number in [0, 10], got {epsilon!r}")
        if isinstance(slack, bool) or not isinstance(slack, int) or slack < 0:
            raise ValueError(f"the load bound's slack must be an integer >= 0, got {slack!r}")
        self.policy, self.epsilon, self.slack = policy, float(epsilon), slack
        self._turn = itertools.count()

    def choose(
        self, key: bytes | None, healthy: Sequence[str], load: Mapping[str, int]
    ) -> tuple[str, int, str]:
        if not healthy:
            raise ValueError("no healthy replica to choose from")
        if self.policy == ROUND_ROBIN:
            return healthy[next(self._turn) % len(healthy)], 0, ROUND_ROBIN
        if self.policy == PREFIX and key is not None:
            order = ranked(key, healthy)
            i = bounded(order, load, self.epsilon, self.slack)
            return order[i], i, "home" if i == 0 else "spill"
        start = next(self._turn) % len(healthy)  # ties rotate instead of piling on the first replica
        rotated = [*healthy[start:], *healthy[:start]]
        return min(rotated, key=lambda r: load.get(r, 0)), 0, LEAST_LOADED
