"""One proxied request, from arrival to its record: :class:`Exchange`.

The handler builds exactly one per proxied request, right after routing, and fills it as it
learns: the target, the body's analysis, the early miss diagnosis (:class:`Early`), what goes
upstream (and ``fallback_body``, the body as sent, for the Gemini auto-cache's one resend), the
store look-up in flight and the record. The relay, the usage tap and the recorder's enrichers
read it; sinks see only its record. Nothing outlives the response holding it (no table keyed
by request id). Data only: it does not route, analyse, look up, send or record.
See docs/request-path.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from proxy.accounting.records import RequestRecord

if TYPE_CHECKING:
    from analyzer.diagnose import Diagnosis
    from analyzer.segments import Seen
    from proxy.body_analysis import BodyAnalysis
    from proxy.headers import RawHeaders
    from proxy.replicas.replica_set import ReplicaSet, Ticket
    from proxy.store.lookup import Lookup
    from proxy.upstream_urls import Target


@dataclass(slots=True)
class Early:
    """What the money layer saw of a request before it went upstream
    (:meth:`proxy.accounting.money.Money.before`), settled by
    :meth:`~proxy.accounting.money.Money.enrich` once the answer is in. ``earlier``: the tenant's
    closest earlier request; ``diagnosis``: the miss reason knowable before the response."""

    cur: Seen
    earlier: Seen | None
    diagnosis: Diagnosis | None


@dataclass(slots=True, eq=False)
class Exchange:
    """``record`` holds the request id, tenant, provider, route and method from the start;
    ``started`` is ``time.perf_counter()`` at arrival (latency and TTFB count from it);
    ``headers`` the ``x-prefixgate-*`` response headers, all known before the first byte.
    ``target`` is None only for a refused path (404 / 400); ``analysis`` until the body is read
    (or when it never was); ``early`` (the money layer's look before the upstream call) when it
    did not look. ``ask_usage``: the proxy spliced ``include_usage`` into an OpenAI stream, so the
    relay drops that chunk. ``upstream_headers``: what goes upstream (hop-by-hop and the proxy's
    own dropped). ``fallback_body``: the body as the client sent it, when the Gemini auto-cache
    rewrote ``upstream_body`` to reference a cachedContent; the relay sends it once instead if
    the upstream refuses that cache (None: no second try). ``lookup``: the prefix store's look-up
    in flight, started by the handler (None: none needed). ``diagnostics``: the answer's
    Anthropic ``diagnostics`` object as sent (the usage tap's), for the money layer. ``replicas``:
    the target's pool (several base URLs; None: one), ``route_key`` / ``route_head`` what it routes
    by (:func:`proxy.replicas.routing_key.route_of`), ``ticket`` the send's books on its replica."""

    record: RequestRecord
    started: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    target: Target | None = None
    analysis: BodyAnalysis | None = None
    early: Early | None = None
    ask_usage: bool = False
    upstream_headers: RawHeaders | None = None
    upstream_body: bytes = b""
    fallback_body: bytes | None = None
    lookup: Lookup | None = None
    diagnostics: object = None
    replicas: ReplicaSet | None = None
    route_key: bytes | None = None
    route_head: bool = False
    ticket: Ticket | None = None
