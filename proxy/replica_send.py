"""Sends one exchange upstream: to its one base URL, or to the replica its pool picks at send time.

For a pool (an upstream with several ``base_urls``, :class:`~proxy.replicas.replica_set.ReplicaSet`)
the pick happens here, just before the send, so the in-flight counts are current: the request's
routing key (set by the handler) → a replica → the send, on that replica's host with the path the
router built. A send that failed before any byte went out goes to the next replica once; one that
may have reached a replica is never sent twice; no replica in rotation is a 502
``no_healthy_replica``. :func:`close_ticket` closes the books when the exchange ends.
It reads no body and relays nothing (:mod:`proxy.relay` does). See docs/several-engines.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from proxy.errors import NO_HEALTHY_REPLICA
from proxy.replicas.retry_rule import LOCAL
from proxy.transport.upstream import UpstreamError, UpstreamPool

if TYPE_CHECKING:
    from proxy.exchange import Exchange

MAX_CACHED_URLS = 4096
_urls: dict[tuple[str, bytes], httpx.URL] = {}


def replica_url(replica: str, url: httpx.URL) -> httpx.URL:
    """``url`` (built on the pool's first base URL) on ``replica``'s scheme, host and port: the
    replicas of a pool share one path (:class:`~proxy.config.UpstreamSpec` checks it)."""
    key = (replica, url.raw_path)
    out = _urls.get(key)
    if out is None:
        if len(_urls) >= MAX_CACHED_URLS:
            _urls.clear()
        out = _urls[key] = httpx.URL(replica).copy_with(raw_path=url.raw_path)
    return out


async def send_exchange(pool: UpstreamPool, exchange: Exchange) -> httpx.Response:
    """The exchange sent, once its response head is in; :class:`UpstreamError` when it could not be."""
    record, target, replicas = exchange.record, exchange.target, exchange.replicas
    assert target is not None and exchange.upstream_headers is not None
    if replicas is None:
        return await pool.send(record.method, target.url, exchange.upstream_headers, exchange.upstream_body)
    close_ticket(exchange)  # a resend (the Gemini auto-cache's) closes the first send's books
    tried: list[str] = []
    while True:
        pick = replicas.pick(exchange.route_key, tried, head=exchange.route_head)
        if pick.replica is None:
            raise UpstreamError(
                NO_HEALTHY_REPLICA,
                f"no replica of upstream {target.upstream!r} is in rotation "
                f"({len(replicas.replicas)} configured; the health checks bring them back); retry",
                LOCAL,
            )
        ticket = replicas.start(pick, len(tried) + 1)
        record.replica = pick.replica.url
        try:
            response = await pool.send(
                record.method,
                replica_url(pick.replica.url, target.url),
                exchange.upstream_headers,
                exchange.upstream_body,
            )
        except UpstreamError as exc:
            if replicas.failed(ticket, exc.phase, exc.error.kind).retry:
                tried.append(pick.replica.url)
                continue
            raise
        except BaseException:
            replicas.done(ticket)  # cancelled (client gone, shutdown): not the replica's failure
            raise
        replicas.answered(ticket, response.status_code)
        exchange.ticket = ticket
        record.attempts = len(tried) + 1
        return response


def close_ticket(exchange: Exchange, error: str | None = None) -> None:
    """The pool's books on the exchange's send, with the answer's prompt and cached tokens;
    ``error``: its answer broke off (a passive health failure). Nothing without a pool, or twice."""
    ticket, replicas = exchange.ticket, exchange.replicas
    if ticket is None or replicas is None:
        return
    exchange.ticket = None
    usage = exchange.record.usage
    replicas.done(
        ticket,
        usage.input_tokens if usage is not None else None,
        usage.cached_tokens if usage is not None else None,
        error=error,
    )
