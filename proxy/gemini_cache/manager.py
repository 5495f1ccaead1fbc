"""``--gemini-auto-cache``: Gemini explicit caches made, used and refreshed for the clients.

:class:`GeminiAutoCache` sits behind the request path's hook for ``gemini`` upstreams: per the
:class:`~proxy.gemini_cache.tracker.Tracker`, a request is rewritten to a live cache of its tenant
(``hit``, refreshed past half its TTL), sent as is while a background create runs (``creating``),
or left alone (``none``). A refused cache is marked at once (:meth:`GeminiAutoCache.refused`).
The calls themselves are :mod:`proxy.gemini_cache.background`'s. It does not parse bodies beyond
:mod:`~proxy.gemini_cache.plan` and deletes nothing upstream.
See docs/providers.md (Gemini explicit caching, automated) and docs/money.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from analyzer.cache_rules import gemini_min_tokens
from analyzer.pricing import PriceTable
from proxy.body_analysis import BodyAnalysis, analyse
from proxy.endpoints import GEMINI, Kind
from proxy.gemini_cache.background import BackgroundCalls
from proxy.gemini_cache.calls import Origin, call_route, client_key
from proxy.gemini_cache.plan import create_body, cuts, rewritten_body
from proxy.gemini_cache.resend import HEADER, RESENT_ID, REWRITE_ID
from proxy.gemini_cache.tracker import Entry, Tracker

if TYPE_CHECKING:
    from proxy.exchange import Exchange

log = logging.getLogger("prefixgate.gemini_cache")
_KINDS = (Kind.GENERATE, Kind.STREAM_GENERATE)


class GeminiAutoCache:
    """The auto-cache for the gemini upstreams named in ``upstreams``; ``inflight`` maps a
    rewritten request's id to the entry it uses, until its record (a refusal marks that entry)."""

    def __init__(
        self,
        upstreams: set[str],
        after: int,
        prices: PriceTable | None = None,
        price_keys: dict[str, str] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.upstreams = upstreams
        self.tracker = Tracker(
            after=after, min_tokens=gemini_min_tokens, **({"clock": clock} if clock else {})
        )
        self.inflight: dict[str, Entry] = {}
        self.counts = {"created": 0, "create_failed": 0, "refreshed": 0, "hits": 0, "dropped": 0, "resent": 0}
        self.calls = BackgroundCalls(self.tracker, self.counts, prices, price_keys or {})

    def applies(self, exchange: Exchange) -> bool:
        target = exchange.target
        return (
            target is not None
            and target.provider == GEMINI
            and target.upstream in self.upstreams
            and target.endpoint.kind in _KINDS
        )

    def before(
        self,
        exchange: Exchange,
        headers: list[tuple[bytes, bytes]],
        query: bytes,
        raw: bytes,
        analysis: BodyAnalysis,
    ) -> tuple[bytes, BodyAnalysis]:
        """The body to forward and its analysis; sets the header, the rewrite id and, when
        rewritten, the exchange's ``fallback_body`` (``raw``, which the relay resends if the
        upstream refuses the cache). The rewritten body is analysed before anything is marked, so
        a failure there leaves the request as sent; the caller guards against any other."""
        target, record = exchange.target, exchange.record
        assert target is not None
        exchange.headers[HEADER] = "none"
        scope = f"{record.tenant}\x00{target.upstream}\x00{analysis.model}"
        key = client_key(headers, query)
        body, model = analysis.body, analysis.model
        if (
            key is None
            or not analysis.analysed
            or not isinstance(body, dict)
            or analysis.chain is None
            or not model
            or record.method != "POST"
        ):
            return raw, analysis
        decision = self.tracker.decide(scope, model, cuts(scope, body, analysis.segments, analysis.chain))
        origin = Origin(
            record.request_id,
            record.tenant,
            target.upstream,
            model,
            call_route(target.route),
            target.url.copy_with(query=None),
        )
        if decision.create is not None:
            exchange.headers[HEADER] = "creating"
            created = decision.create
            self.calls.create(created, origin, key, create_body(body, created.cut, model, created.ttl_s))
        used = decision.use
        if used is None:
            return raw, analysis
        if decision.refresh:
            self.calls.refresh(used, origin, key)
        new_raw = rewritten_body(body, used.cut, used.name)
        new_analysis = analyse(target, new_raw)
        self.counts["hits"] += 1
        record.rewrites = [*record.rewrites, REWRITE_ID]
        exchange.headers["x-prefixgate-rewrites"] = ",".join(record.rewrites)
        exchange.headers[HEADER] = "hit"
        exchange.fallback_body = raw
        self.inflight[record.request_id] = used
        return new_raw, new_analysis

    def refused(self, request_id: str) -> None:
        """The relay found the upstream refusing this rewritten request's cache (and resends it
        as sent): the entry is marked refused at once, so concurrent and later requests go as
        sent (unless it was replaced by a newer one meanwhile: that one stays)."""
        entry = self.inflight.pop(request_id, None)
        if entry is not None and self.tracker.refused(entry):
            self.counts["dropped"] += 1
        self.counts["resent"] += 1
        log.warning("gemini cache refused on request %s: resent as sent, entry dropped", request_id)

    def enrich(self, exchange: Exchange) -> None:
        """At the record: forgets the request's entry, and drops it if the request was resent
        without :meth:`refused` having marked it."""
        record = exchange.record
        entry = self.inflight.pop(record.request_id, None) if self.inflight else None
        if entry is not None and RESENT_ID in record.rewrites and self.tracker.refused(entry):
            self.counts["dropped"] += 1

    @property
    def tasks(self) -> set[asyncio.Task]:
        """The background calls still running."""
        return self.calls.tasks

    async def aclose(self) -> None:
        await self.calls.aclose()
