"""The money layer of the proxy: cost, savings, missed savings and the miss reason per request.

Two calls per request:

- :meth:`Money.before` — at request time, after the body was analysed: compares the request
  with the tenant's closest earlier one (:class:`proxy.accounting.diagnosis.DiagnosisMemory`) and
  returns what is visible before any response (the ``x-prefixgate-miss-reason`` header:
  a changed tool, a volatile timestamp, a TTL already past, a prefix below the minimum).
- :meth:`Money.enrich` — a recorder enricher, once the response is done: prices the usage
  (:mod:`analyzer.cost`), counts missed tokens (a prefix the proxy saw repeat within the
  provider's TTL that the provider did not report as cached) and settles the miss reason
  with the cached tokens the provider reported.

Unknown models, and usage with a clamped number (``Usage.flags``), get ``None`` money fields
(counted as unpriced by stats and metrics), never 0; a request whose prefix is unknown (the
store was skipped) gets ``missed_usd = None``.
This module does no I/O and keeps only bounded in-memory state.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

from analyzer.cost import cost_of, missed_usd
from analyzer.cache_rules import missed_tokens
from analyzer.diagnose import Diagnosis, Seen, settle
from analyzer.pricing import PriceTable
from analyzer.segments import Segment
from proxy.accounting.diagnosis import DiagnosisMemory
from proxy.accounting.records import RequestRecord


@dataclass(slots=True)
class _Pending:
    cur: Seen
    earlier: Seen | None
    before: Diagnosis | None


class Money:
    def __init__(self, prices: PriceTable, memory: DiagnosisMemory | None = None, max_pending: int = 50_000) -> None:
        self.prices = prices
        self.memory = memory or DiagnosisMemory()
        self.max_pending = max_pending
        self._pending: OrderedDict[str, _Pending] = OrderedDict()

    def before(self, request_id: str, tenant: str, provider: str, model: str | None,
               segments: Sequence[Segment], ts: float | None = None) -> Diagnosis | None:
        """Observe an analysed request; the miss reason knowable before its response."""
        if not segments:
            return None
        cur = Seen(provider, model or "", time.time() if ts is None else ts, tuple(segments))
        obs = self.memory.observe(tenant, cur, cached_tokens=None)
        self._pending[request_id] = _Pending(cur, obs.earlier, obs.diagnosis)
        while len(self._pending) > self.max_pending:  # requests that never finished
            self._pending.popitem(last=False)
        return obs.diagnosis

    def enrich(self, record: RequestRecord, ctx: object = None) -> None:
        pending = self._pending.pop(record.request_id, None)
        price = self.prices.lookup(record.model)
        usage = record.usage
        cost = cost_of(usage, price)
        record.cost_usd, record.saved_usd = cost.cost_usd, cost.saved_usd
        if pending is None:
            record.missed_usd = 0.0 if cost.priced else None
            return
        cached = usage.cached_tokens if usage is not None else None
        if cached is None:
            final = pending.before  # no response to settle it with
        else:
            final = settle(pending.cur, pending.earlier, pending.before, cached)
        record.miss_reason = final.header() if final is not None else None
        if usage is None or not cost.priced or record.prefix_segments is None:  # unpriced (or clamped usage), or prefix unknown
            record.missed_usd = None
            return
        elapsed = pending.cur.ts - pending.earlier.ts if pending.earlier is not None else None
        tokens = missed_tokens(pending.cur, record.prefix_segments, usage.cached_tokens, elapsed)
        record.missed_usd = missed_usd(tokens, price)

    async def aclose(self) -> None:
        self._pending.clear()
