"""The upstream transport: a keep-alive HTTP/1.1 pool whose responses are parsed by llhttp.

:mod:`.upstream` (:class:`~.upstream.UpstreamPool`, what the gate sends through, and its errors)
→ :mod:`.pool` (:class:`H1Transport`: the pool and one request's send) → :mod:`.connection`
(one connection as an asyncio protocol) → :mod:`.response_parser` (one response on it, checked
by :mod:`.strict`); :mod:`.reuse` says when a connection may carry another request (the pool's
security boundary); :mod:`.limits` sizes the pool.

Nothing here knows about providers, tenants or accounting. See docs/request-path.md.
"""

from proxy.transport.pool import H1Transport

__all__ = ["H1Transport"]
