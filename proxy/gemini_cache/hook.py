"""The request path's one handle on the Gemini auto-cache: :class:`AutoCacheHook`.

The gate holds one (``gate.gemini_auto_cache``, from :func:`auto_cache_for`): on, with a
:class:`~proxy.gemini_cache.manager.GeminiAutoCache` manager, or off (``manager`` None: every
method does nothing). The handler calls :meth:`AutoCacheHook.before` after its rewrite (a failure
is logged, the body goes as it came); the relay calls :meth:`AutoCacheHook.may_refuse`,
:meth:`AutoCacheHook.is_refusal` and :meth:`AutoCacheHook.resend` on a 400 / 403 / 404; the gate
calls ``start``, ``enrich``, ``aclose`` and, as the shutdown's last resort, ``cut``.
See docs/providers.md (Gemini explicit caching, automated).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from proxy.endpoints import GEMINI
from proxy.gemini_cache.manager import GeminiAutoCache
from proxy.gemini_cache.resend import MAX_ERROR_BODY, mark_resent, may_be_refusal, names_cached_content

if TYPE_CHECKING:
    from analyzer.pricing import PriceTable
    from proxy.accounting.records import RequestRecord
    from proxy.body_analysis import BodyAnalysis
    from proxy.config import ProxyConfig
    from proxy.exchange import Exchange
    from proxy.headers import RawHeaders
    from proxy.transport.upstream import UpstreamPool

__all__ = ["MAX_ERROR_BODY", "AutoCacheHook", "auto_cache_for"]

log = logging.getLogger("prefixgate.gemini_cache")


class AutoCacheHook:
    def __init__(self, manager: GeminiAutoCache | None = None) -> None:
        self.manager = manager

    @property
    def on(self) -> bool:
        return self.manager is not None

    def before(
        self, exchange: Exchange, raw: bytes, analysis: BodyAnalysis, headers: RawHeaders, query: bytes
    ) -> tuple[bytes, BodyAnalysis]:
        """The body to forward and its analysis: rewritten to reference a live cache (the
        exchange keeps the body as sent in ``fallback_body``), or as they came (also when the
        auto-cache fails: advice, like the rewrite)."""
        manager = self.manager
        if manager is None or not manager.applies(exchange):
            return raw, analysis
        try:
            return manager.before(exchange, headers, query, raw, analysis)
        except Exception:
            log.exception(
                "gemini auto-cache failed on request %s; forwarding the body unchanged",
                exchange.record.request_id,
            )
            return raw, analysis

    @staticmethod
    def may_refuse(exchange: Exchange, status: int) -> bool:
        """True when a rewritten request's answer may be a refusal of its cache (the relay then
        reads up to :data:`MAX_ERROR_BODY` of it before anything goes out)."""
        return exchange.fallback_body is not None and may_be_refusal(status)

    @staticmethod
    def is_refusal(status: int, head: bytes, encoding: str | None) -> bool:
        """True when that error (its first bytes, as sent) names the ``cachedContent``."""
        return names_cached_content(status, head, encoding)

    def resend(self, exchange: Exchange) -> None:
        """After a refusal: the exchange carries the body as the client sent it (once), its
        record and headers say so, and the entry is dropped now (concurrent requests go as sent;
        a failure to drop it is logged and the resend goes on)."""
        assert exchange.fallback_body is not None
        mark_resent(exchange)
        exchange.upstream_body, exchange.fallback_body = exchange.fallback_body, None
        if self.manager is None:
            return
        try:
            self.manager.refused(exchange.record.request_id)
        except Exception:
            log.exception(
                "gemini auto-cache failed to drop the entry of request %s", exchange.record.request_id
            )

    def start(self, pool: UpstreamPool, emit: Callable[[RequestRecord], None]) -> None:
        """The background calls share the proxy's pool, and each is recorded on its own (sinks only)."""
        if self.manager is not None:
            self.manager.calls.pool, self.manager.calls.emit = pool, emit

    def enrich(self, exchange: Exchange) -> None:
        if self.manager is not None:
            self.manager.enrich(exchange)

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()

    def cut(self) -> list[asyncio.Task]:
        """Cancels the background calls still running (each records itself as cut); returns them."""
        calls = [t for t in (self.manager.tasks if self.manager is not None else ()) if not t.done()]
        for call in calls:
            call.cancel()
        return calls


def auto_cache_for(config: ProxyConfig, prices: PriceTable | None) -> AutoCacheHook:
    """The hook for the gemini upstreams ``--gemini-auto-cache`` (all of them) or their own
    ``auto_cache`` turns on; off when none is."""
    names = {
        u.name
        for u in config.all_upstreams
        if u.protocol == GEMINI and (config.gemini_auto_cache or u.auto_cache)
    }
    if not names:
        return AutoCacheHook()
    keys = {u.name: u.prices for u in config.all_upstreams if u.prices}
    return AutoCacheHook(GeminiAutoCache(names, config.gemini_auto_cache_after, prices, keys))
