"""A prefix tree over segment hashes, in bounded memory.

Each node is one prefix, keyed by its chain hash (:mod:`analyzer.prefix`: the hash of the
provider/model root and every segment up to it, so a key already names its whole path;
parent links are implicit). A node keeps how many requests passed through it, its size in
bytes, its depth, the largest count among its children (a node whose count exceeds every
child's is where requests branch or stop: the radix-compressed view), when it was last
used (for TTLs) and which request used it last (to explain forks).

Memory is bounded by ``max_nodes``: past it, nodes seen once (unique suffixes, which
cannot be repeated prefixes yet) are dropped. This module computes no money and no rates.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

COUNT, END, DEPTH, MAX_CHILD, LAST_TS, LAST_REQ, PATH, FIRST_LINE, MODEL = range(9)
ROOT_CANDIDATES = 8  # distinct first segments remembered per model, to explain forks at segment 0


@dataclass(frozen=True)
class Match:
    shared: int  # leading segments seen before (at any time)
    live: int  # leading segments seen within the TTL
    previous: tuple[int, ...]  # the last request through the deepest shared node; at segment 0, recent distinct first segments
    branched: bool  # an earlier request went on past the shared prefix with something else


class PrefixTree:
    def __init__(self, max_nodes: int = 1_500_000):
        if max_nodes < 1000:
            raise ValueError("max_nodes must be >= 1000")
        self.max_nodes = max_nodes
        self.nodes: dict[bytes, list] = {}
        self.roots: dict[bytes, dict[bytes, int]] = {}  # root → {first segment key: last request}, most recent last
        self.pruned = 0

    def __len__(self) -> int:
        return len(self.nodes)

    def insert(self, root: bytes, keys: list[bytes], ends: list[int], paths: list[str], ts: float | None,
               ttl: float, request: int, line: int, model: str = "", exact: range | None = None) -> Match:
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
