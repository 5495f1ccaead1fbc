"""The auto-cache's background ``cachedContents`` calls: :class:`BackgroundCalls`.

A create (POST) or a refresh (PATCH) goes over the proxy's upstream pool to the request's own
upstream with the client's key (never stored or logged); its answer is read up to
:data:`MAX_ANSWER` bytes, raw, so a gzip bomb is never decoded past the bound. Each call is its own
accounting record (``-create`` / ``-refresh``, ``cache_storage_usd``), handed over exactly once
however it ends; the outcome goes to the :class:`~proxy.gemini_cache.tracker.Tracker`.
It decides nothing about requests (:mod:`proxy.gemini_cache.manager`). See docs/providers.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterable, Callable
from typing import TYPE_CHECKING, cast

import httpx
import orjson

from analyzer.pricing import PriceTable
from proxy.accounting.records import RequestRecord
from proxy.endpoints import GEMINI
from proxy.errors import SHUTDOWN_CUT, ProxyError, broken_off, record_failure
from proxy.gemini_cache.calls import Origin, resource_url, storage_usd
from proxy.gemini_cache.resend import MAX_ERROR_BODY, decoded
from proxy.gemini_cache.tracker import Entry, Tracker
from proxy.transport.upstream import UpstreamError

if TYPE_CHECKING:
    from proxy.transport.upstream import UpstreamPool

log = logging.getLogger("prefixgate.gemini_cache")

#: At shutdown, how long background calls may finish (and be recorded) before they are cut.
CLOSE_WAIT_S = 5.0
#: A background call's answer is read (and decoded) up to this many bytes: no ``cachedContents``
#: resource is bigger.
MAX_ANSWER = MAX_ERROR_BODY
#: A 200 to a create without a cache name or a token count.
BAD_ANSWER = ProxyError(502, "cache_bad_answer", "api_error", "api_error")
#: The proxy's own failure around a background call (logged).
INTERNAL = ProxyError(500, "cache_call_failed", "api_error", "api_error")


class BackgroundCalls:
    """The running calls (``tasks``) and what they need: the proxy's ``pool`` and the recorder's
    ``emit``, both set at start (:meth:`~proxy.gemini_cache.hook.AutoCacheHook.start`); ``counts``
    is the manager's, shared."""

    def __init__(
        self,
        tracker: Tracker,
        counts: dict[str, int],
        prices: PriceTable | None,
        price_keys: dict[str, str],
    ) -> None:
        self.tracker = tracker
        self.counts = counts
        self.prices = prices
        self.price_keys = price_keys
        self.pool: UpstreamPool | None = None
        self.emit: Callable[[RequestRecord], None] | None = None
        self.tasks: set[asyncio.Task] = set()

    def create(self, entry: Entry, origin: Origin, key: bytes, body: bytes) -> None:
        """Starts the create of ``entry`` (its outcome marks it created or failed)."""
        self._spawn(self._create(entry, origin, key, body))

    def refresh(self, entry: Entry, origin: Origin, key: bytes) -> None:
        """Starts the refresh of ``entry`` (a PATCH of its ttl)."""
        self._spawn(self._refresh(entry, origin, key))

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _call(self, record: RequestRecord, url: httpx.URL, key: bytes, body: bytes) -> dict | None:
        """One background call, its status on ``record``; the answer's JSON object ({} when it
        is not one), or None when no answer came (``record.error`` says why). Latency is set
        by the caller's :meth:`_finish`. The answer is read raw, as sent (never decoded past
        :data:`MAX_ANSWER`), and the connection closed when not read to the end."""
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
            async for chunk in cast("AsyncIterable[bytes]", response.stream):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:
                    chunks = []
                    break
        except (httpx.TransportError, OSError) as exc:
            record_failure(record, broken_off(exc), keep_status=True)
            return None
        finally:
            await response.aclose()
        data = decoded(b"".join(chunks), response.headers.get("content-encoding"))
        try:
            doc = orjson.loads(data) if data else {}
        except orjson.JSONDecodeError:
            doc = {}
        return doc if isinstance(doc, dict) else {}

    def _record(self, origin: Origin, what: str, method: str) -> RequestRecord:
        """A call's record; ``analysed``, as the body is the proxy's own JSON (never counted as
        one it could not parse)."""
        record = RequestRecord(
            f"{origin.request_id}-{what}", time.time(), origin.tenant, GEMINI, origin.route, method=method
        )
        record.model, record.upstream = origin.model, origin.upstream
        record.analysed = True
        return record

    def _finish(self, record: RequestRecord, started: float, cut: bool) -> None:
        """Hands a background call's record to the recorder: exactly once, however it ended (the
        recorder contains its sinks' failures; the guard here is a last one)."""
        record.latency_s = time.perf_counter() - started
        if cut:
            record_failure(record, SHUTDOWN_CUT)
        if self.emit is None:
            return
        try:
            self.emit(record)
        except Exception:
            log.exception("recording gemini cache call %s failed", record.request_id)

    async def _create(self, entry: Entry, origin: Origin, key: bytes, body: bytes) -> None:
        """The create; a failure backs the entry off (the requests go on as sent), and so does a
        bug here, which must not leave the entry pending or the call unrecorded. Google's ttl runs
        from its create, so it is counted from no later than the send."""
        record, started, cut = self._record(origin, "create", "POST"), time.perf_counter(), False
        sent_at = self.tracker.clock()
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
                self.tracker.failed(entry)
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
        except Exception:
            log.exception("gemini cachedContents create failed on request %s", origin.request_id)
            self.tracker.failed(entry)
            record_failure(record, INTERNAL, keep_status=True, keep_error=True)
        finally:
            self._finish(record, started, cut)

    async def _refresh(self, entry: Entry, origin: Origin, key: bytes) -> None:
        """The refresh; on a failure the entry runs out as it is (gone upstream, 403 / 404: made
        again like a refused one). The extension is billed up to the answer, never under what was
        bought, but the entry is used only up to the send's ttl. A bug here must not leave the
        entry refreshing or the call unrecorded."""
        record, started, cut = self._record(origin, "refresh", "PATCH"), time.perf_counter(), False
        before, sent_at = entry.expires_at, self.tracker.clock()
        try:
            doc = await self._call(
                record, resource_url(origin.url, entry.name), key, orjson.dumps({"ttl": f"{entry.ttl_s}s"})
            )
            if doc is None or record.status != 200:
                self.tracker.refreshed(entry, None)
                if record.status in (403, 404):
                    self.tracker.refused(entry)
                log.warning(
                    "gemini cache refresh failed (HTTP %d%s)",
                    record.status,
                    f", {record.error}" if record.error else "",
                )
                return
            now = self.tracker.clock()
            extension = max(0.0, now + entry.ttl_s - before)
            self.tracker.refreshed(entry, entry.ttl_s, at=sent_at)
            record.cache_storage_usd = storage_usd(
                self.prices, origin.model, self.price_keys.get(origin.upstream), entry.tokens, extension
            )
            self.counts["refreshed"] += 1
        except asyncio.CancelledError:
            cut = True
            self.tracker.refreshed(entry, None)
            raise
        except Exception:
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
