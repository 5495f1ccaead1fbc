"""The money layer of the proxy: cost, savings, missed savings and the miss reason per request.

:meth:`Money.before` (at request time) compares the request with the tenant's closest earlier
one and returns the :class:`~proxy.exchange.Early` observation (the miss-reason header);
:meth:`Money.enrich` (a recorder enricher) prices the usage once, per upstream price key first,
counts missed tokens, settles the miss reason and copies the provider's own. A model, usage or
TTL split that cannot be priced exactly gets ``None`` money fields, never 0.

This module does no I/O and keeps no per-request state (it travels on the exchange); its only
memory is the bounded :class:`~proxy.accounting.diagnosis.DiagnosisMemory`. See docs/money.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from analyzer.cache_rules import provider_ttl_s
from analyzer.cost import PER, TTL_SPLIT_UNKNOWN, UNPRICED, cost_of, missed_usd, rules_drift
from analyzer.cost import ttl_split_unknown as cost_ttl_split_unknown
from analyzer.diagnose import settle
from analyzer.missed import Reuse, at_breakpoint, longest, missed_tokens, prefix_bytes, reusable
from analyzer.pricing import Price, PriceTable
from analyzer.segments import Seen, Segment
from analyzer.usage import MAX_TOKENS, Usage
from proxy.accounting.diagnosis import DiagnosisMemory
from proxy.accounting.records import RequestRecord
from proxy.exchange import Early, Exchange
from proxy.provider_diagnostics import UNKNOWN_SHAPE, Reason, read_reason


def drift_of(usage: Usage | None, price: Price | None) -> list[str]:
    """What in ``usage`` the model's rules do not expect: the parser's notes
    (:mod:`analyzer.usage` "Drift"), and cache writes on a model whose price row bills none
    (an older OpenAI model reporting writes: the rules or the price file are stale). The one
    check, :func:`analyzer.cost.rules_drift`, shared with ``analyze``."""
    return list(rules_drift(usage, price))


def ttl_split_unknown(exchange: Exchange, usage: Usage | None) -> list[str]:
    """``[TTL_SPLIT_UNKNOWN]`` when ``usage``'s writes cannot be priced by TTL
    (:func:`analyzer.cost.ttl_split_unknown`: GPT-5.6 Chat writes of a request that marked a
    ``ttl: "12h"`` breakpoint; Chat usage has no TTL split), else ``[]``. The row is then
    unpriced and flagged (``record.flags``, the ledger's ``flags`` column), not drift."""
    target = exchange.target
    chat = (
        target.endpoint.usage == "chat"
        if target is not None
        else exchange.record.route.endswith("completions")
    )
    early, analysis = exchange.early, exchange.analysis
    segments = early.cur.segments if early is not None else analysis.segments if analysis is not None else ()
    return [TTL_SPLIT_UNKNOWN] if cost_ttl_split_unknown(usage, segments, chat) else []


def provider_miss(record: RequestRecord, diagnostics: object, price: Price | None) -> None:
    """The provider's own miss reason onto ``record`` (:func:`proxy.provider_diagnostics.read_reason`
    of the answer's raw ``diagnostics``): its type, its ``cache_missed_input_tokens`` and those
    tokens priced at input − cached read (None: unpriced, the type carries none, or the row has
    rules drift: :meth:`Money.enrich` nulls them with the rest of its money). A shape the
    parser does not know is ``unknown_shape`` with no tokens and no dollars: ignored for money,
    and the ledger row says so; the request's own cost is untouched. So is a token count no
    prompt can have (above :data:`analyzer.usage.MAX_TOKENS`, as the usage parser's bound): it
    would overflow the stats' 64-bit JSON integers and the ledger's ``SUM``."""
    reason = read_reason(diagnostics)
    if reason is None:
        return
    if reason.tokens is not None and reason.tokens > MAX_TOKENS:
        reason = Reason(UNKNOWN_SHAPE)
    record.provider_miss_reason, record.provider_missed_tokens = reason.type, reason.tokens
    if reason.tokens is not None and price is not None:
        record.provider_missed_usd = reason.tokens * (price.input - price.read_rate) / PER


class Money:
    def __init__(
        self,
        prices: PriceTable,
        memory: DiagnosisMemory | None = None,
        upstream_prices: dict[str, str] | None = None,
    ) -> None:
        self.prices = prices
        self.memory = memory or DiagnosisMemory()
        self.upstream_prices = dict(upstream_prices or {})

    def price_for(self, model: str | None, upstream: str | None):
        """The price row for ``model`` as served through ``upstream``: under the upstream's
        price-table key first (``upstream_prices``: name → key), then by the model alone (None:
        unpriced)."""
        key = self.upstream_prices.get(upstream) if upstream else None
        return self.prices.lookup(model, key) if key else self.prices.lookup(model)

    def before(
        self,
        tenant: str,
        provider: str,
        model: str | None,
        segments: Sequence[Segment],
        ts: float | None = None,
    ) -> Early | None:
        """Observe an analysed request (the diagnosis memory remembers it)."""
        if not segments:
            return None
        cur = Seen(provider, model or "", time.time() if ts is None else ts, tuple(segments))
        obs = self.memory.observe(tenant, cur, cached_tokens=None)
        return Early(cur, obs.earlier, obs.diagnosis)

    def enrich(self, exchange: Exchange) -> None:
        """Price the record, copy the provider's own miss reason (Anthropic diagnostics) and settle
        prefixgate's. Rules drift (the rules are stale) nulls the row's money and the provider's
        missed dollars; no price, a clamped usage number or an unknown TTL split the money; an
        unknown prefix the missed dollars."""
        record, early = exchange.record, exchange.early
        price = self.price_for(record.model, record.upstream)
        provider_miss(record, exchange.diagnostics, price)
        usage = record.usage
        record.drift = drift_of(usage, price)
        if record.drift:
            record.provider_missed_usd = None
        record.flags = ttl_split_unknown(exchange, usage)
        cost = cost_of(usage, price) if not record.drift and not record.flags else UNPRICED
        record.cost_usd, record.saved_usd, record.cost_breakdown = cost.cost_usd, cost.saved_usd, cost.parts
        if early is None:
            record.missed_usd = 0.0 if cost.priced else None
            return
        cached = usage.cached_tokens if usage is not None else None
        final = (
            early.diagnosis if cached is None else settle(early.cur, early.earlier, early.diagnosis, cached)
        )
        record.miss_reason = final.header() if final is not None else None
        if usage is None or not cost.priced or record.prefix_segments is None:
            record.missed_usd = None
            return
        record.missed_usd = missed_usd(self.missed_tokens(early, record.prefix_segments, usage), price, usage)

    @staticmethod
    def missed_tokens(early: Early, repeated: int, usage: Usage) -> int:
        """:mod:`analyzer.missed` for a finished request: the longer of the prefix the store saw
        repeat (``repeated`` segments) and, when the request forked from its closest earlier
        one at a volatile value, the prefix equal to that one but for volatile values, cut (on
        GPT-5.6 and later) to where a breakpoint can sit; nothing when the closest earlier
        request is older than the provider's TTL."""
        cur, earlier = early.cur, early.earlier
        if earlier is not None and cur.ts - earlier.ts > provider_ttl_s(
            cur.provider, cur.segments, cur.model
        ):
            return 0
        exact = Reuse(repeated, prefix_bytes(cur.segments, repeated))
        volatile = None
        if (
            earlier is not None
            and early.diagnosis is not None
            and early.diagnosis.reason.startswith("volatile-")
        ):
            volatile = reusable(cur.segments, earlier.segments)
        reuse = at_breakpoint(cur.provider, cur.model, cur.segments, longest(exact, volatile))
        if reuse.segments <= 0:
            return 0
        return missed_tokens(
            cur.provider,
            cur.model,
            reuse.bytes,
            usage.cached_tokens,
            usage.input_tokens,
            prefix_bytes(cur.segments, len(cur.segments)),
        )
