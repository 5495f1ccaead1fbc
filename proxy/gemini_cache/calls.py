"""Where the auto-cache's background ``cachedContents`` calls go, and what they record.

:class:`Origin` is what a call keeps of the client request that caused it (never its key);
:func:`client_key` the key it is made with (the client's own, only when the tenant is hashed
from it); :func:`resource_url` its URL (the request's upstream, its path cut at ``/models/``:
no other host); :func:`call_route` its record's route; :func:`storage_usd` the storage it
bought. Pure functions: the calls themselves are :mod:`proxy.gemini_cache.background`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from analyzer.pricing import PriceTable
from proxy.tenant import api_key_of, query_key_of


def storage_usd(
    prices: PriceTable | None, model: str, key: str | None, tokens: int, seconds: float
) -> float | None:
    """``tokens`` stored ``seconds`` at the model's ``cache_storage`` rate (per million per
    hour; ``key``: the upstream's price key); None when unpriced, 0 for nothing bought."""
    price = prices.lookup(model, key) if prices is not None else None
    rate = price.cache_storage if price is not None else None
    if rate is None or seconds <= 0:
        return None if rate is None else 0.0
    return round(tokens * rate / 1e6 * seconds / 3600.0, 12)


@dataclass(frozen=True, slots=True)
class Origin:
    """What a background call keeps of the client request that caused it (never its key):
    ``route`` is the records' (the client's route cut at ``/models/``, then ``/cachedContents``),
    ``url`` the client request's upstream URL."""

    request_id: str
    tenant: str
    upstream: str
    model: str
    route: str
    url: httpx.URL


def client_key(headers: list[tuple[bytes, bytes]], query: bytes) -> bytes | None:
    """The client's Gemini API key (``x-goog-api-key`` or ``?key=``); None: no auto-cache.
    Also None when the key the tenant is hashed from (:mod:`proxy.tenant`: the first key
    header, e.g. a bearer token, else ``?key=``) is another: the caches are scoped by tenant,
    so one made with this key must never be referenced by a request holding another."""
    key = None
    for name, value in headers:
        if name.lower() == b"x-goog-api-key" and value.strip():
            key = value.strip()
            break
    if key is None and query:
        key = query_key_of(query)
    tenant_key = api_key_of(headers) or (query_key_of(query) if query else None)
    return key if key is not None and key == tenant_key else None


def call_route(route: str) -> str:
    """The route of a background call's record: the client's route cut at ``/models/``."""
    return route.rsplit("/models/", 1)[0] + "/cachedContents"


def resource_url(url: httpx.URL, name: str) -> httpx.URL:
    """The request's upstream URL with its path cut at ``/models/`` and ``name`` put there;
    no query (the key goes in a header)."""
    path = url.raw_path.split(b"?", 1)[0]
    base = path.rsplit(b"/models/", 1)[0]
    return url.copy_with(raw_path=base + b"/" + name.encode("ascii"))
