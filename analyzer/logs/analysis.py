"""One streaming pass over request records: prefixes, allowed vs realised hit rate, money, forks.

Per request: the cached tokens the provider's rules allowed (the longest prefix seen within
TTL, never below what was cached), the cached tokens realised, money spent/saved/missed by the
proxy's own definitions (:mod:`analyzer.cost`, :mod:`analyzer.missed`; drifted or flagged usage
priced null), ledger rows of unknown prefix counted apart, and the cause of each fork.

It does NOT hold the whole log: memory is bounded (the tree caps its nodes, only the last
``recent_bodies`` bodies are kept); prefix tokens are byte estimates (:mod:`analyzer.tokens`).
See docs/analyze.md for the definitions.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from analyzer.cache_rules import cacheable_tokens, rules_for
from analyzer.cost import cost_of, missed_usd, rules_drift, ttl_split_unknown
from analyzer.divergence import MIN_SIMILARITY
from analyzer.logs.config import AnalyzeConfig
from analyzer.logs.reader import LogRecord
from analyzer.logs.recent_bodies import RecentBodies
from analyzer.logs.record_chain import record_chain, record_ttl
from analyzer.logs.tallies import ForkStat, Totals
from analyzer.logs.tree import COUNT, DEPTH, END, FIRST_LINE, MODEL, PATH, Match, PrefixTree
from analyzer.missed import Reuse, at_breakpoint, missed_tokens
from analyzer.segments import last_message_start
from analyzer.tokens import estimate_tokens


class LogAnalysis:
    def __init__(self, config: AnalyzeConfig | None = None):
        self.cfg = config or AnalyzeConfig()
        self.tree = PrefixTree(self.cfg.max_nodes)
        self.total = Totals()
        self.by_provider: dict[str, Totals] = {}
        self.unanalysed = 0
        self.estimated_input = 0
        self.spent = self.saved = self.missed = 0.0
        #: the part of ``missed`` behind volatile values (logs with bodies)
        self.missed_volatile = 0.0
        #: ledger rows without prefix information: counted apart
        self.prefix_unknown = 0
        #: requests whose usage had a price: spent/saved are sums over these only
        self.costed = 0
        #: requests whose missed savings have a price: ``missed`` sums these
        self.missed_priced = 0
        #: requests whose missed savings could not be priced (no price, drift, flags)
        self.missed_unknown = 0
        self.unpriced: Counter = Counter()
        #: requests whose usage the rules do not expect (analyzer.cost.rules_drift): priced null
        self.drifted = 0
        #: (model, note) → requests
        self.drift: Counter = Counter()
        #: requests whose usage numbers are not exact (clamped, TTL split unknown): priced null
        self.flagged = 0
        self.forks: dict[tuple[str, str], ForkStat] = {}
        self.forked_requests = 0
        self.unexplained_forks = 0
        self.expired = 0
        self.below_minimum = 0
        self.no_breakpoint = 0
        self._recent = RecentBodies(self.cfg.recent_bodies)
        self._prices: dict[str, Any] = {}
        self._index = 0

    def _price(self, model: str):
        if self.cfg.prices is None:
            return None
        if model not in self._prices:
            self._prices[model] = self.cfg.prices.lookup(model)
        return self._prices[model]

    def add(self, rec: LogRecord) -> None:
        self._index += 1
        idx = self._index
        walk = record_chain(rec)
        if walk is None:
            self.unanalysed += 1
            return
        keys, ends, segs = walk.keys, walk.ends, walk.segments
        ttl = record_ttl(rec, segs, self.cfg.ttl_openai, self.cfg.ttl_anthropic)
        model = f"{rec.provider}/{rec.model}"
        seen = self.tree.insert(
            walk.root, keys, ends, walk.paths, rec.ts, ttl, idx, rec.line, model, exact=walk.exact
        )
        usage = rec.usage
        cached = usage.cached_tokens if usage is not None else 0
        est_total = estimate_tokens(ends[-1])
        input_tokens = usage.input_tokens if usage is not None else est_total
        price = self._price(rec.model)
        priceable = self._spend(rec, price, segs)
        if segs is None and not rec.prefix_known:
            # A ledger row written while the proxy's store was skipped: its chain is exact but
            # the sizes of its prefixes are not, so it is counted apart: in no hit rate, no
            # advice, no missed savings (the proxy's own figure for it is null too).
            self.prefix_unknown += 1
            return
        if usage is None:
            self.estimated_input += 1

        rules = rules_for(rec.provider, rec.model)
        live_bytes = self._live_bytes(keys, ends, seen.live, segs is not None)
        if segs is not None and seen.live:
            # GPT-5.6+: only up to where a breakpoint can sit (as the proxy counts it)
            live_bytes = at_breakpoint(rec.provider, rec.model, segs, Reuse(seen.live, live_bytes)).bytes
        allowed = cacheable_tokens(rules, live_bytes) if seen.live else 0
        # What the provider did cache was allowed, whatever the estimate says: realised ≤ allowed.
        allowed = max(min(allowed, input_tokens), cached)
        if seen.shared > seen.live:
            self.expired += 1
        if seen.live and allowed == 0 and estimate_tokens(live_bytes) > 0:
            self.below_minimum += 1
        if (
            rec.provider == "anthropic"
            and allowed
            and segs is not None
            and not any(s.cache_control for s in segs)
        ):
            self.no_breakpoint += 1

        for t in (self.total, self.by_provider.setdefault(rec.provider, Totals())):
            t.requests += 1
            t.input_tokens += input_tokens
            t.allowed_tokens += allowed
            if usage:
                t.with_usage += 1
                t.usage_input_tokens += usage.input_tokens
                t.cached_tokens += usage.cached_tokens
                t.allowed_with_usage += allowed

        self._miss(rec, price if priceable else None, segs, seen, ttl, live_bytes, ends)
        if segs is not None:
            self._fork(rec, segs, seen)
            self._recent.remember(idx, rec.body, segs, rec.ts)

    def _miss(
        self, rec: LogRecord, price, segs, seen: Match, ttl: float, live_bytes: int, ends: list[int]
    ) -> None:
        """Missed savings: a priced ledger row's own (the proxy's, as the dashboard sums them);
        none for a ledger row without usage (a refused or failed call billed nothing, as the
        proxy says); else priced here, unless ``price`` is None (no price, or a usage priced
        null for drift or flags: no missed savings either)."""
        usage = rec.usage
        if rec.ledger_money is not None:
            if rec.ledger_money[2] is not None:
                self.missed += rec.ledger_money[2]
                self.missed_priced += 1
            return
        if rec.ledger and usage is None:
            return
        if price is None:
            self.missed_unknown += 1
            return
        reuse = self._recent.reusable(segs, rec.ts, seen, ttl) if segs is not None else None
        if reuse is not None:
            reuse = at_breakpoint(rec.provider, rec.model, segs, reuse)
        tokens = missed_tokens(
            rec.provider,
            rec.model,
            max(live_bytes, reuse.bytes if reuse else 0),
            usage.cached_tokens if usage is not None else 0,
            usage.input_tokens if usage is not None else None,
            ends[-1] if ends else None,
        )
        usd = missed_usd(tokens, price, usage) or 0.0
        self.missed += usd
        self.missed_priced += 1
        if reuse is not None and reuse.volatile and reuse.bytes > live_bytes:
            self.missed_volatile += usd

    def _spend(self, rec: LogRecord, price, segs) -> bool:
        """Spent and saved: a priced ledger row's own figures (the proxy's), else the usage priced
        here. False when the usage cannot be priced exactly (rules drift, flags, a Chat request's
        12-hour writes: :func:`analyzer.cost.ttl_split_unknown`)."""
        if self.cfg.prices is not None and price is None and rec.ledger_money is None:
            self.unpriced[rec.model or "?"] += 1
        if rec.ledger_money is not None:
            cost, saved = rec.ledger_money[0], rec.ledger_money[1] or 0.0
        elif rec.usage is not None and price is not None:
            if ttl_split_unknown(rec.usage, segs or (), rec.route.endswith("completions")):
                self.flagged += 1
                return False
            c = cost_of(rec.usage, price)
            if c.cost_usd is None:
                drift = rules_drift(rec.usage, price)
                if drift:
                    self.drifted += 1
                    for note in drift:
                        self.drift[(rec.model or "?", note)] += 1
                elif rec.usage.flags:
                    self.flagged += 1
                return False
            cost, saved = c.cost_usd, c.saved_usd or 0.0
        else:
            return True
        self.costed += 1
        self.spent += cost
        self.saved += saved
        return True

    def _live_bytes(self, keys, ends, live: int, exact: bool) -> int:
        """The size of the prefix repeated within the TTL: from the request's own segments, or
        for a ledger row without a body, from the tree's node (exact once any row stated it)."""
        if not live:
            return 0
        if not exact:
            node = self.tree.nodes.get(keys[live - 1])
            if node is not None:
                return node[END]
        return ends[live - 1]

    def _fork(self, rec: LogRecord, segs, seen: Match) -> None:
        """Count where this request left the prefix it shared: not at a new prefix or an
        extension of one (a conversation's next turn), nor in the new turn itself (where
        requests should differ), nor at segment 0 against a dissimilar request (another app or
        template sharing the model, not a fork of one prefix)."""
        n = seen.shared
        if n >= len(segs) or not seen.previous or not seen.branched:
            return
        if n >= last_message_start(segs):
            return
        where = "head" if segs[n].in_head else "history"
        fork = self._recent.closest_fork(rec.body, segs, seen)
        if fork is None:
            self.forked_requests += 1
            self.unexplained_forks += 1
            return
        if n == 0 and fork.similarity < MIN_SIMILARITY:
            return
        self.forked_requests += 1
        stat = self.forks.get((fork.field, fork.kind))
        if stat is None:
            example = fork.volatile.value if fork.volatile else fork.text[fork.offset : fork.offset + 40]
            stat = self.forks[(fork.field, fork.kind)] = ForkStat(
                fork.field, fork.kind, where, example=example
            )
        stat.count += 1
        stat.offsets[fork.at] += 1

    def top_prefixes(self) -> list[dict[str, Any]]:
        total_input = max(1, self.total.input_tokens)
        rows = []
        for node in self.tree.branch_points():
            tokens = estimate_tokens(node[END])
            rows.append((node[COUNT] * tokens, node, tokens))
        rows.sort(key=lambda r: -r[0])
        return [
            {
                "count": node[COUNT],
                "segments": node[DEPTH],
                "tokens": tokens,
                "share_of_input": node[COUNT] * tokens / total_input,
                "ends_at": node[PATH],
                "model": node[MODEL],
                "first_line": node[FIRST_LINE],
            }
            for _, node, tokens in rows[: self.cfg.top]
        ]
