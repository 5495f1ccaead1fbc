"""The one connection pool to the upstreams, and how a failed send becomes 502/503/504.

:class:`UpstreamPool` owns the one transport (:class:`proxy.transport.H1Transport` by default;
httpcore's with ``PREFIXGATE_UPSTREAM_TRANSPORT=httpcore``; a mock in tests), sized by
``--max-connections`` or the open-file limit, and sends with no ``httpx.AsyncClient``: no default
headers, cookies, redirects or environment proxies; the response is streamed untouched. A failed
send raises :class:`UpstreamError` carrying its :class:`proxy.errors.ProxyError`
(``upstream_unreachable``, ``upstream_protocol_error``, ``pool_exhausted``, ``upstream_timeout``).

This module does not pick the upstream (:mod:`proxy.upstream_urls`) or read bodies. See docs/request-path.md.
"""

from __future__ import annotations

import os
import socket

import httpx

from proxy.errors import POOL_EXHAUSTED, UPSTREAM_PROTOCOL, UPSTREAM_TIMEOUT, UPSTREAM_UNREACHABLE, ProxyError
from proxy.replicas.retry_rule import SENT, phase_of
from proxy.transport import H1Transport
from proxy.transport.limits import fd_limit, pool_size

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def wire_headers(
    method: str, url: httpx.URL, headers: list[tuple[bytes, bytes]], body: bytes
) -> list[tuple[bytes, bytes]]:
    """The headers ``httpx.Request(method, url, headers=headers, content=body)`` would send,
    in the same order: ``Host`` first, then ``headers`` (which hold neither ``Host`` nor
    ``Content-Length``; :func:`proxy.headers.request_headers` drops both), then the length."""
    out = [(b"Host", url.netloc), *headers]
    if body:
        out.append((b"Content-Length", str(len(body)).encode("ascii")))
    elif method in ("POST", "PUT", "PATCH"):
        out.insert(1, (b"Content-Length", b"0"))
    return out


class UpstreamError(Exception):
    """``phase``: how far the send got (:func:`proxy.replicas.retry_rule.phase_of`): a pool of
    replicas sends one that failed before any byte to another replica."""

    def __init__(self, error: ProxyError, message: str, phase: str = SENT) -> None:
        super().__init__(message)
        self.error = error
        self.message = message
        self.phase = phase


def _describe(url: httpx.URL) -> str:
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}"


class UpstreamPool:
    """Sends through ``transport``: by default the proxy's own :class:`H1Transport` (per-origin
    pools behind one bound), or httpx's with ``PREFIXGATE_UPSTREAM_TRANSPORT=httpcore`` (the
    benchmarks' reference). Timeouts and the bound come from ``config``."""

    def __init__(self, config, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.fd_limit = fd_limit()
        self.sized_by = "--max-connections" if config.max_connections else "fd_limit"
        self.max_connections = config.max_connections or pool_size(self.fd_limit)
        self.pool_timeout = config.pool_timeout
        limits = httpx.Limits(
            max_connections=self.max_connections,
            max_keepalive_connections=self.max_connections,
            keepalive_expiry=60.0,
        )
        if transport is None:
            if os.environ.get("PREFIXGATE_UPSTREAM_TRANSPORT") == "httpcore":
                transport = httpx.AsyncHTTPTransport(
                    limits=limits, socket_options=NODELAY, retries=0, trust_env=False
                )
            else:
                transport = H1Transport(self.max_connections, keepalive_expiry=60.0)
        self.transport = transport
        timeout = httpx.Timeout(
            connect=config.connect_timeout,
            read=config.read_timeout,
            write=config.write_timeout,
            pool=config.pool_timeout,
        )
        self._timeout_ext = timeout.as_dict()

    async def send(
        self, method: str, url: httpx.URL, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> httpx.Response:
        """Sends the request (body in one piece) and returns once the response headers are in;
        through :class:`H1Transport` without building an ``httpx.Request``. A pool timeout is the
        proxy's own limit (``pool_exhausted``), never reported as the upstream's timeout."""
        request: httpx.Request | None = None
        try:
            if isinstance(self.transport, H1Transport):
                response = await self.transport.send(
                    method, url, wire_headers(method, url, headers, body), body, self._timeout_ext
                )
            else:
                request = httpx.Request(
                    method, url, headers=headers, content=body, extensions={"timeout": self._timeout_ext}
                )
                response = await self.transport.handle_async_request(request)
        except httpx.PoolTimeout as exc:
            raise UpstreamError(
                POOL_EXHAUSTED,
                f"all {self.max_connections} upstream connections of this proxy stayed busy for "
                f"{self.pool_timeout:g} s (--max-connections, --pool-timeout); retry",
                phase_of(exc),
            ) from None
        except httpx.TimeoutException as exc:
            raise UpstreamError(
                UPSTREAM_TIMEOUT, f"upstream {_describe(url)} timed out ({type(exc).__name__})", phase_of(exc)
            ) from None
        except (httpx.RemoteProtocolError, httpx.LocalProtocolError) as exc:
            raise UpstreamError(
                UPSTREAM_PROTOCOL,
                f"upstream {_describe(url)} broke the HTTP protocol ({type(exc).__name__})",
                phase_of(exc),
            ) from None
        except (httpx.TransportError, OSError) as exc:
            raise UpstreamError(
                UPSTREAM_UNREACHABLE,
                f"could not reach upstream {_describe(url)} ({type(exc).__name__})",
                phase_of(exc),
            ) from None
        if request is not None:
            response.request = request
        return response

    def pool_stats(self) -> dict:
        """``max_connections``, ``in_use``, ``idle``, ``waiting`` (and since start
        ``waited_total``, ``exhausted_total``), plus where the size came from (``sized_by``:
        ``fd_limit`` or ``--max-connections``), the descriptor limit and the pool timeout. Only
        the size for a transport that is not the proxy's own (httpcore's, a mock)."""
        stats = (
            self.transport.stats()
            if isinstance(self.transport, H1Transport)
            else {"max_connections": self.max_connections}
        )
        return {
            **stats,
            "sized_by": self.sized_by,
            "fd_limit": self.fd_limit,
            "pool_timeout_s": self.pool_timeout,
        }

    async def aclose(self) -> None:
        await self.transport.aclose()
