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

from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from analyzer.cache_rules import (
    ANTHROPIC_TTL_S,
    OPENAI_56_RULES,
    OPENAI_TTL_RANGE_S,
    cacheable_tokens,
    provider_ttl_s,
    rules_for,
)
from analyzer.cost import cost_of, missed_usd, rules_drift, ttl_split_unknown
from analyzer.divergence import MIN_SIMILARITY, text_fork
from analyzer.logs.reader import LogRecord, ledger_ends
from analyzer.logs.tree import COUNT, DEPTH, END, FIRST_LINE, MODEL, PATH, PrefixTree
from analyzer.missed import Reuse, at_breakpoint, longest, missed_tokens, reusable
from analyzer.prefix import chain, root_hash
from analyzer.segments import last_message_start, segments_for
from analyzer.tokens import estimate_tokens


@dataclass
class AnalyzeConfig:
    #: the early end of "5-10 minutes": allowed hits stay conservative
    ttl_openai: float = OPENAI_TTL_RANGE_S[0]
    ttl_anthropic: float = ANTHROPIC_TTL_S["5m"]
    top: int = 10
    max_nodes: int = 1_500_000
    recent_bodies: int = 512
    #: analyzer.pricing.PriceTable, or None for no money figures
    prices: Any = None

    def __post_init__(self) -> None:
        if self.ttl_openai <= 0 or self.ttl_anthropic <= 0:
            raise ValueError("TTLs must be > 0 seconds")
        if self.top < 1:
            raise ValueError("top must be >= 1")
        if self.recent_bodies < 1:
            raise ValueError("recent_bodies must be >= 1")


@dataclass
class Totals:
    requests: int = 0
    input_tokens: int = 0
    allowed_tokens: int = 0
    with_usage: int = 0
    usage_input_tokens: int = 0
    cached_tokens: int = 0
    allowed_with_usage: int = 0


@dataclass
class ForkStat:
    field: str
    kind: str
    where: str
    count: int = 0
    offsets: Counter = field(default_factory=Counter)
    example: str = ""


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
        self._recent: OrderedDict[int, tuple] = OrderedDict()
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
        segs = None
        if rec.body is not None:
            segs = segments_for(rec.provider, rec.route, rec.body)
            if not segs:
                self.unanalysed += 1
                return
            root = root_hash(rec.provider, rec.model)
            ch = chain(segs, root)
            keys = [h[:8] for h in ch.hashes]
            ends = list(ch.ends)
            paths = [s.path for s in segs]
            exact = range(len(keys))
        elif rec.chain_hex:
            root = root_hash(rec.provider, rec.model)
            keys = [bytes.fromhex(h) for h in rec.chain_hex]
            ends = ledger_ends(len(keys), rec.total_bytes or 0, rec.prefix_segments, rec.prefix_bytes)
            paths = [f"segment[{i}]" for i in range(len(keys))]
            exact = (
                range(rec.prefix_segments - 1, rec.prefix_segments)
                if 0 < rec.prefix_segments <= len(keys) and rec.prefix_bytes
                else range(0)
            )
        else:
            self.unanalysed += 1
            return
        ttl = self.cfg.ttl_anthropic if rec.provider == "anthropic" else self.cfg.ttl_openai
        if segs is not None and any(s.cache_control == "1h" for s in segs):
            ttl = max(ttl, ANTHROPIC_TTL_S["1h"])  # the request asked for Anthropic's 1-hour cache
        if (
            rules_for(rec.provider, rec.model) is OPENAI_56_RULES
        ):  # GPT-5.6+: 30 minutes at least, 12 h on request
            ttl = max(ttl, provider_ttl_s(rec.provider, segs or (), rec.model))
        seen = self.tree.insert(
            root, keys, ends, paths, rec.ts, ttl, idx, rec.line, f"{rec.provider}/{rec.model}", exact=exact
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
        if (
            segs is not None and seen.live
        ):  # GPT-5.6+: only up to where a breakpoint can sit (as the proxy counts it)
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

        if (
            rec.ledger_money is not None
        ):  # the proxy priced this row: its missed savings, as the dashboard sums them
            if rec.ledger_money[2] is not None:
                self.missed += rec.ledger_money[2]
                self.missed_priced += 1
        elif rec.ledger and usage is None:
            pass  # a ledger row without usage billed nothing (a refused or failed call): nothing missed, as the proxy says
        elif (
            price is not None and priceable
        ):  # a usage priced null (drift, flags) has no missed savings either
            reuse = self._reusable(rec, segs, seen, ttl) if segs is not None else None
            if reuse is not None:
                reuse = at_breakpoint(rec.provider, rec.model, segs, reuse)
            tokens = missed_tokens(
                rec.provider,
                rec.model,
                max(live_bytes, reuse.bytes if reuse else 0),
                cached,
                usage.input_tokens if usage is not None else None,
                ends[-1] if ends else None,
            )
            usd = missed_usd(tokens, price, usage) or 0.0
            self.missed += usd
            self.missed_priced += 1
            if reuse is not None and reuse.volatile and reuse.bytes > live_bytes:
                self.missed_volatile += usd
        else:
            self.missed_unknown += 1
        if segs is not None:
            self._fork(rec, segs, seen, idx)
            self._remember(idx, rec, segs)

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

    def _remember(self, idx: int, rec: LogRecord, segs) -> None:
        self._recent[idx] = (rec.body, segs, rec.ts)
        if len(self._recent) > self.cfg.recent_bodies:
            self._recent.popitem(last=False)

    def _reusable(self, rec: LogRecord, segs, seen, ttl: float) -> Reuse | None:
        """:func:`analyzer.missed.reusable` against the earlier requests the tree names (the
        last one through the shared prefix), when this one forks from them within the TTL."""
        if not seen.branched or seen.shared >= len(segs):
            return None
        best = None
        for prev_idx in seen.previous:
            prev = self._recent.get(prev_idx)
            if prev is None:
                continue
            if rec.ts is not None and prev[2] is not None and rec.ts - prev[2] > ttl:
                continue
            found = reusable(segs, prev[1], seen.shared)
            best = longest(best, found)
        return best

    def _fork(self, rec: LogRecord, segs, seen, idx: int) -> None:
        n = seen.shared
        if n >= len(segs) or not seen.previous or not seen.branched:
            return  # a new prefix, or an extension of one (a conversation's next turn)
        if n >= last_message_start(segs):
            return  # the new turn itself: where requests should differ
        where = "head" if segs[n].in_head else "history"
        best = None
        for prev_idx in seen.previous:
            prev = self._recent.get(prev_idx)
            if prev is None:
                continue
            fork = text_fork(prev[0], prev[1], rec.body, segs, n)  # prev: (body, segments, ts)
            if fork is not None and (best is None or fork.similarity > best.similarity):
                best = fork
        if best is None:
            self.forked_requests += 1
            self.unexplained_forks += 1
            return
        if n == 0 and best.similarity < MIN_SIMILARITY:
            return  # another app or template sharing the model, not a fork of one prefix
        self.forked_requests += 1
        fork = best
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
