"""The upstream transport: a keep-alive HTTP/1.1 pool whose responses are parsed by llhttp.

- :mod:`proxy.transport.pool`: :class:`H1Transport`, the pool and one request's send.
- :mod:`proxy.transport.connection`: one connection as an asyncio protocol.
- :mod:`proxy.transport.response_parser`: :class:`~proxy.transport.response_parser.ResponseParser`,
  one response parsed on one connection, and its body stream.
- :mod:`proxy.transport.upstream`: :class:`~proxy.transport.upstream.UpstreamPool`, the pool the
  gate sends through, and its errors.
- :mod:`proxy.transport.reuse`: when a connection may carry another request (the pool's
  security boundary: a response reaches only the request that caused it).

Nothing here knows about providers, tenants or accounting.
"""

from proxy.transport.pool import H1Transport

__all__ = ["H1Transport"]
