"""A prefix tree over segment hashes, in bounded memory.

Each node is one prefix keyed by its chain hash (:mod:`analyzer.prefix`; parent links implicit)
and keeps its request count, size, depth, the largest child count (where requests branch or
stop), when it was last used (TTLs) and its last request (forks). Past ``max_nodes``, nodes seen
once are dropped.

It does NOT compute money or rates.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

COUNT, END, DEPTH, MAX_CHILD, LAST_TS, LAST_REQ, PATH, FIRST_LINE, MODEL = range(9)
#: distinct first segments remembered per model, to explain forks at segment 0
ROOT_CANDIDATES = 8


@dataclass(frozen=True)
class Match:
    #: leading segments seen before (at any time)
    shared: int
    #: leading segments seen within the TTL
    live: int
    #: the last request through the deepest shared node; at segment 0, recent distinct first segments
    previous: tuple[int, ...]
    #: an earlier request went on past the shared prefix with something else
    branched: bool


class PrefixTree:
    def __init__(self, max_nodes: int = 1_500_000):
        if max_nodes < 1000:
            raise ValueError("max_nodes must be >= 1000")
        self.max_nodes = max_nodes
        self.nodes: dict[bytes, list] = {}
        #: root → {first segment key: last request}, most recent last
        self.roots: dict[bytes, dict[bytes, int]] = {}
        self.pruned = 0

    def __len__(self) -> int:
        return len(self.nodes)

    def insert(
        self,
        root: bytes,
        keys: list[bytes],
        ends: list[int],
        paths: list[str],
        ts: float | None,
        ttl: float,
        request: int,
        line: int,
        model: str = "",
        exact: range | None = None,
    ) -> Match:
        """Count one request's chain. ``exact``: the indexes whose ``ends`` are exact (all when
        None); they replace a node's size, which a ledger row without a body can only estimate."""
        nodes = self.nodes
        shared = live = 0
        alive = True
        for key in keys:
            node = nodes.get(key)
            if node is None:
                break
            shared += 1
            if alive and (ts is None or node[LAST_TS] is None or ts - node[LAST_TS] <= ttl):
                live += 1
            else:
                alive = False
        firsts = self.roots.setdefault(root, {})
        previous = (nodes[keys[shared - 1]][LAST_REQ],) if shared else tuple(reversed(firsts.values()))
        branched = nodes[keys[shared - 1]][MAX_CHILD] > 0 if shared else bool(previous)
        parent = None
        for i, key in enumerate(keys):
            node = nodes.get(key)
            if node is None:
                node = [0, ends[i], i + 1, 0, ts, request, sys.intern(paths[i]), line, sys.intern(model)]
                nodes[key] = node
            elif exact is None or i in exact:
                node[END] = ends[i]
            node[COUNT] += 1
            node[LAST_TS] = ts if ts is not None else node[LAST_TS]
            node[LAST_REQ] = request
            if parent is not None and node[COUNT] > parent[MAX_CHILD]:
                parent[MAX_CHILD] = node[COUNT]
            parent = node
        firsts.pop(keys[0], None)
        firsts[keys[0]] = request
        if len(firsts) > ROOT_CANDIDATES:
            del firsts[next(iter(firsts))]
        if len(nodes) > self.max_nodes:
            self._prune()
        return Match(shared, live, previous, branched)

    def _prune(self) -> None:
        before = len(self.nodes)
        self.nodes = {k: v for k, v in self.nodes.items() if v[COUNT] > 1}
        self.pruned += before - len(self.nodes)

    def branch_points(self, min_count: int = 2):
        """Nodes where repeated prefixes end or fork: count ≥ min_count and above every child's."""
        for node in self.nodes.values():
            if node[COUNT] >= min_count and node[COUNT] > node[MAX_CHILD]:
                yield node
