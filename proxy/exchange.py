"""One proxied request, from arrival to its record: :class:`Exchange`.

The handler builds exactly one per ``/v1/*`` request, right after routing, and fills it as
it learns: the :class:`~proxy.routing.Target` (upstream URL, and the
:class:`~proxy.routing.Endpoint` the router resolved once), the body's
:class:`~proxy.analysis.Analysis`, the money layer's early miss diagnosis
(:class:`~proxy.accounting.money.Early`), what goes upstream, and the
:class:`~proxy.accounting.records.RequestRecord`. When
the Gemini auto-cache rewrote the body to reference a ``cachedContent``, ``fallback_body``
keeps the body as sent, for the relay's one resend. The relay
(:class:`~proxy.relay.Relay`), the usage tap (:func:`proxy.usage_tap.tap_for`) and the
recorder's enrichers read it; sinks see only its record. Nothing outlives the request's
response holding it: no table keyed by request id, so a request that never finishes
leaves nothing behind.

The prefix store's look-up runs beside the upstream exchange, not before it:
:class:`Lookup` (``exchange.lookup``) starts it when the analysis is ready (the memory store
answers at once; a remote one runs as an asyncio task under its guard's deadline,
:mod:`proxy.store.guard`), the relay awaits :meth:`Lookup.result` only right before a response
head (the ``x-prefixgate-prefix-*`` headers) and :meth:`Lookup.close` on every way out (the
answer if it came, else the task is cancelled), before the record goes. Until an answer the
record says ``store`` ``unavailable`` (or ``skipped``) and the prefix is unknown (``None``,
headers ``unknown``). Nothing sent upstream depends on it.

Not to be confused with the transport's :class:`~proxy.transport.exchange.ResponseParser`
(one HTTP response parsed on one upstream connection): this object is the proxy's view of
the whole request, and never touches a socket. It holds data, and the one look-up in flight:
it does not route, analyse, send or record.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proxy.accounting.records import STORE_CANCELLED, STORE_OK, STORE_SKIPPED, STORE_UNAVAILABLE, RequestRecord

if TYPE_CHECKING:
    from analyzer.prefix import Chain
    from proxy.accounting.money import Early
    from proxy.analysis import Analysis
    from proxy.headers import RawHeaders
    from proxy.routing import Target
    from proxy.store import PrefixStore

log = logging.getLogger("prefixgate.handler")

UNKNOWN = "unknown"  # prefix header value when the store was skipped, failed or never answered
LOOKUP_TASK = "prefixgate-lookup"  # the name of every look-up task (tests look for leftovers by it)
SEGMENTS, BYTES = "x-prefixgate-prefix-segments", "x-prefixgate-prefix-bytes"


class Lookup:
    """One request's prefix look-up-and-record (one store round trip), in flight beside the
    upstream exchange. Holds the record, the headers and the chain, never the exchange."""

    __slots__ = ("chain", "headers", "record", "task")

    def __init__(self, record: RequestRecord, headers: dict[str, str], chain: Chain) -> None:
        self.record, self.headers, self.chain = record, headers, chain
        self.task: asyncio.Task[int | None] | None = None

    def start(self, store: PrefixStore) -> None:
        """Asks the store (skipped while it is not ``ready``: nothing awaited); the prefix is
        unknown until an answer is written."""
        record = self.record
        record.prefix_segments = record.prefix_bytes = None
        self.headers[SEGMENTS] = self.headers[BYTES] = UNKNOWN
        if not store.ready(record.tenant):  # the tenant's Redis (node) breaker is open, or the store is held
            record.store = STORE_SKIPPED
            return
        record.store = STORE_UNAVAILABLE
        now = getattr(store, "seen_sync", None)  # the memory store never waits: no task
        if now is not None:
            try:
                self._answer(now(record.tenant, record.provider, self.chain.hashes))
            except Exception as exc:  # the store is advice; never fail a request on it
                log.warning("prefix store failed on request %s: %s", record.request_id, type(exc).__name__)
            return
        task = self.task = asyncio.get_running_loop().create_task(store.seen(record.tenant, record.provider, self.chain.hashes), name=LOOKUP_TASK)
        task.add_done_callback(_retrieve)

    async def result(self) -> None:
        """Waits for the answer (bounded by the store's own deadline) and writes it; cancelled
        with the caller."""
        task = self.task
        if task is None:
            return
        try:
            seen = await task
        except Exception as exc:  # the store is advice; never fail a request on it
            log.warning("prefix store failed on request %s: %s", self.record.request_id, type(exc).__name__)
            seen = None
        self.task = None
        self._answer(seen)

    def close(self) -> None:
        """Ends it without waiting: writes the answer if it came, else cancels the task (the
        prefix stays unknown). Idempotent."""
        task, self.task = self.task, None
        if task is None:
            return
        if not task.done() or task.cancelled():  # cancelled here, or with the request awaiting it
            task.cancel()
            self.record.store = STORE_CANCELLED  # not the store's failure: the request ended first
        elif task.exception() is None:
            self._answer(task.result())

    def _answer(self, seen: int | None) -> None:
        if seen is None:  # failed or past its deadline: unknown, never 0
            return
        record = self.record
        record.store = STORE_OK
        record.prefix_segments, record.prefix_bytes = seen, self.chain.bytes_at(seen)
        self.headers[SEGMENTS], self.headers[BYTES] = str(seen), str(record.prefix_bytes)


def _retrieve(task: asyncio.Task) -> None:
    """A look-up nobody awaited (closed after it failed) never logs "exception was never retrieved"."""
    if not task.cancelled():
        task.exception()


@dataclass(slots=True, eq=False)
class Exchange:
    record: RequestRecord  # the request id, tenant, provider, route and method are its first fields
    started: float = 0.0  # time.perf_counter() at arrival: latency and TTFB count from here
    headers: dict[str, str] = field(default_factory=dict)  # the x-prefixgate-* response headers, all known before the first byte
    target: Target | None = None  # None only when the path was refused (404 / 400)
    analysis: Analysis | None = None  # None until the body is read, or when it never was
    early: Early | None = None  # the money layer's request-time observation; None: not observed
    ask_usage: bool = False  # the proxy spliced include_usage into an OpenAI stream: the relay drops that chunk
    upstream_headers: RawHeaders | None = None  # what goes upstream (hop-by-hop and our own headers dropped)
    upstream_body: bytes = b""
    fallback_body: bytes | None = None  # the body as the client sent it, when the Gemini auto-cache rewrote upstream_body
    # to reference a cachedContent: the relay sends it once instead if the upstream refuses that cache
    # (proxy.gemini_cache.resend); None: no second try
    lookup: Lookup | None = None  # the prefix store's look-up in flight (started by the handler); None: none needed
    diagnostics: object = None  # the answer's Anthropic ``diagnostics`` object as sent (the usage tap's), for the money layer
