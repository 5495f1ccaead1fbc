"""``--gemini-auto-cache``: Gemini explicit caches made, used and refreshed for the clients.

:class:`GeminiAutoCache` sits behind the request path's hook for ``gemini`` upstreams: per the
:class:`~proxy.gemini_cache.tracker.Tracker`, a request is rewritten to a live cache of its tenant
(``hit``, refreshed past half its TTL), sent as is while a background create runs (``creating``),
or left alone (``none``). Background calls go to the request's own upstream with the client's key
(never stored or logged), and each is its own accounting record (``-create`` / ``-refresh``,
``cache_storage_usd``). A refused cache is marked at once (:meth:`GeminiAutoCache.refused`).
It does not parse bodies beyond :mod:`~proxy.gemini_cache.plan` and deletes nothing upstream.
See docs/providers.md (Gemini explicit caching, automated) and docs/money.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx
import orjson

from analyzer.cache_rules import gemini_min_tokens
from analyzer.pricing import PriceTable
from proxy.accounting.records import RequestRecord
from proxy.body_analysis import BodyAnalysis, analyse
from proxy.errors import SHUTDOWN_CUT, ProxyError, broken_off, record_failure
from proxy.gemini_cache.calls import Origin, call_route, client_key, resource_url, storage_usd
from proxy.gemini_cache.plan import create_body, cuts, rewritten_body
from proxy.gemini_cache.resend import (
    HEADER,
    MAX_ERROR_BODY,
    RESENT_ID,
    REWRITE_ID,
    decoded,
)
from proxy.gemini_cache.tracker import Entry, Tracker
from proxy.routing import GEMINI, Kind
from proxy.transport.upstream import UpstreamError

if TYPE_CHECKING:
    from proxy.exchange import Exchange
    from proxy.transport.upstream import UpstreamPool

log = logging.getLogger("prefixgate.gemini_cache")
_KINDS = (Kind.GENERATE, Kind.STREAM_GENERATE)
CLOSE_WAIT_S = 5.0  # at shutdown, how long background calls may finish (and be recorded) before they are cut
BAD_ANSWER = ProxyError(
    502, "cache_bad_answer", "api_error", "api_error"
)  # a 200 to a create without a cache name or a token count
MAX_ANSWER = MAX_ERROR_BODY  # a background call's answer is read (and decoded) up to this many bytes
INTERNAL = ProxyError(
    500, "cache_call_failed", "api_error", "api_error"
)  # the proxy's own failure around a background call (logged)


class GeminiAutoCache:
    def __init__(
        self,
        upstreams: set[str],
        after: int,
        prices: PriceTable | None = None,
        price_keys: dict[str, str] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.upstreams = upstreams  # names of the gemini upstreams it works for
        self.tracker = Tracker(
            after=after, min_tokens=gemini_min_tokens, **({"clock": clock} if clock else {})
        )
        self.prices = prices
        self.price_keys = price_keys or {}
        self.pool: UpstreamPool | None = None  # the proxy's upstream pool, set at start (AutoCacheHook.start)
        self.emit: Callable[[RequestRecord], None] | None = None  # the recorder's emit, set at start
        self.tasks: set[asyncio.Task] = set()
        self.inflight: dict[
            str, Entry
        ] = {}  # request id → the entry a rewritten request uses, until its record
        self.counts = {"created": 0, "create_failed": 0, "refreshed": 0, "hits": 0, "dropped": 0, "resent": 0}

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
        rewritten, the exchange's ``fallback_body`` (``raw``, for the relay's resend). Never
        raises into the request (the caller guards)."""
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
            self._spawn(
                self._create(
                    decision.create,
                    origin,
                    key,
                    create_body(body, decision.create.cut, model, decision.create.ttl_s),
                )
            )
        used = decision.use
        if used is None:
            return raw, analysis
        if decision.refresh:
            self._spawn(self._refresh(used, origin, key))
        new_raw = rewritten_body(body, used.cut, used.name)
        new_analysis = analyse(
            target, new_raw
        )  # before anything is marked: a failure here leaves the request as sent
        self.counts["hits"] += 1
        record.rewrites = [*record.rewrites, REWRITE_ID]
        exchange.headers["x-prefixgate-rewrites"] = ",".join(record.rewrites)
        exchange.headers[HEADER] = "hit"
        exchange.fallback_body = raw  # the relay resends it if the upstream refuses the cache
        self.inflight[record.request_id] = (
            used  # which entry served it: refused() / enrich() mark it on a refusal
        )
        return new_raw, new_analysis

    def refused(self, request_id: str) -> None:
        """The relay found the upstream refusing this rewritten request's cache (and resends it
        as sent): the entry is marked refused at once, so concurrent and later requests go as
        sent (unless it was replaced by a newer one meanwhile: that one stays)."""
        entry = self.inflight.pop(request_id, None)
        if entry is not None and self.tracker.refused(entry):  # False: already replaced by a newer entry
            self.counts["dropped"] += 1
        self.counts["resent"] += 1
        log.warning("gemini cache refused on request %s: resent as sent, entry dropped", request_id)

    def enrich(self, exchange: Exchange) -> None:
        record = exchange.record
        entry = self.inflight.pop(record.request_id, None) if self.inflight else None
        if (
            entry is not None and RESENT_ID in record.rewrites and self.tracker.refused(entry)
        ):  # marked without refused(): still
            self.counts["dropped"] += 1

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _call(self, record: RequestRecord, url: httpx.URL, key: bytes, body: bytes) -> dict | None:
        """One background call, its status on ``record``; the answer's JSON object ({} when it
        is not one), or None when no answer came (``record.error`` says why). Latency is set
        by the caller's :meth:`_finish`."""
        assert self.pool is not None
        headers = [
            (b"x-goog-api-key", key),
            (b"content-type", b"application/json"),
            (b"accept-encoding", b"identity"),
        ]
        try:
            response = await self.pool.send(record.method, url, headers, body)
        except UpstreamError as exc:
            record_failure(record, exc.error)
            return None
        record.status = response.status_code
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.stream:  # type: ignore[union-attr]  # raw, as sent: never decoded past the bound (a gzip bomb)
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:  # no cachedContents resource is this big: not an answer it reads
                    chunks = []
                    break
        except (httpx.TransportError, OSError) as exc:
            record_failure(record, broken_off(exc), keep_status=True)
            return None
        finally:
            await response.aclose()  # closes the connection when not read to the end
        data = decoded(b"".join(chunks), response.headers.get("content-encoding"))
        try:
            doc = orjson.loads(data) if data else {}
        except orjson.JSONDecodeError:
            doc = {}
        return doc if isinstance(doc, dict) else {}

    def _record(self, origin: Origin, what: str, method: str) -> RequestRecord:
        record = RequestRecord(
            f"{origin.request_id}-{what}", time.time(), origin.tenant, GEMINI, origin.route, method=method
        )
        record.model, record.upstream = origin.model, origin.upstream
        record.analysed = True  # the proxy's own JSON body: never counted as a body it could not parse
        return record

    def _finish(self, record: RequestRecord, started: float, cut: bool) -> None:
        """Hands a background call's record to the recorder: exactly once, however it ended."""
        record.latency_s = time.perf_counter() - started
        if cut:
            record_failure(record, SHUTDOWN_CUT)
        if self.emit is None:
            return
        try:
            self.emit(record)
        except Exception:  # the recorder contains its sinks' failures; this is a last guard
            log.exception("recording gemini cache call %s failed", record.request_id)

    async def _create(self, entry: Entry, origin: Origin, key: bytes, body: bytes) -> None:
        record, started, cut = self._record(origin, "create", "POST"), time.perf_counter(), False
        sent_at = (
            self.tracker.clock()
        )  # Google's ttl runs from its create: count it from no later than the send
        try:
            doc = await self._call(record, resource_url(origin.url, "cachedContents"), key, body)
            name = doc.get("name") if doc is not None else None
            tokens = (doc.get("usageMetadata") or {}).get("totalTokenCount") if doc is not None else None
            if (
                doc is not None
                and record.status == 200
                and not (
                    isinstance(name, str) and name.startswith("cachedContents/") and isinstance(tokens, int)
                )
            ):
                record_failure(record, BAD_ANSWER, keep_status=True)
            if record.status != 200 or record.error is not None:
                self.tracker.failed(entry)  # backs off; the requests go on as sent
                self.counts["create_failed"] += 1
                log.warning(
                    "gemini cachedContents create failed (HTTP %d%s); backing off",
                    record.status,
                    f", {record.error}" if record.error else "",
                )
                return
            assert isinstance(name, str) and isinstance(tokens, int)
            ttl = entry.ttl_s
            self.tracker.created(entry, name, tokens, ttl, at=sent_at)
            record.cache_storage_usd = storage_usd(
                self.prices, origin.model, self.price_keys.get(origin.upstream), tokens, ttl
            )
            self.counts["created"] += 1
            log.info("gemini cache %s created: %d tokens, ttl %ds", name, tokens, ttl)
        except asyncio.CancelledError:
            cut = True
            self.tracker.failed(entry)
            raise
        except Exception:  # a bug here must not leave the entry pending or the call unrecorded
            log.exception("gemini cachedContents create failed on request %s", origin.request_id)
            self.tracker.failed(entry)
            record_failure(record, INTERNAL, keep_status=True, keep_error=True)
        finally:
            self._finish(record, started, cut)

    async def _refresh(self, entry: Entry, origin: Origin, key: bytes) -> None:
        record, started, cut = self._record(origin, "refresh", "PATCH"), time.perf_counter(), False
        before, sent_at = entry.expires_at, self.tracker.clock()
        try:
            doc = await self._call(
                record, resource_url(origin.url, entry.name), key, orjson.dumps({"ttl": f"{entry.ttl_s}s"})
            )
            if doc is None or record.status != 200:
                self.tracker.refreshed(entry, None)  # the entry runs out as it is
                if record.status in (403, 404):  # gone upstream: made again like a refused one
                    self.tracker.refused(entry)
                log.warning(
                    "gemini cache refresh failed (HTTP %d%s)",
                    record.status,
                    f", {record.error}" if record.error else "",
                )
                return
            now = self.tracker.clock()
            extension = max(
                0.0, now + entry.ttl_s - before
            )  # billed up to the answer: never under what was bought
            self.tracker.refreshed(entry, entry.ttl_s, at=sent_at)  # used only up to the send's ttl
            record.cache_storage_usd = storage_usd(
                self.prices, origin.model, self.price_keys.get(origin.upstream), entry.tokens, extension
            )
            self.counts["refreshed"] += 1
        except asyncio.CancelledError:
            cut = True
            self.tracker.refreshed(entry, None)
            raise
        except Exception:  # a bug here must not leave the entry refreshing or the call unrecorded
            log.exception("gemini cache refresh failed on request %s", origin.request_id)
            self.tracker.refreshed(entry, None)
            record_failure(record, INTERNAL, keep_status=True, keep_error=True)
        finally:
            self._finish(record, started, cut)

    async def aclose(self) -> None:
        """Lets the background calls finish (at most :data:`CLOSE_WAIT_S`), then cuts the rest;
        every one is recorded either way, before the recorder's sinks close."""
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=CLOSE_WAIT_S)
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
