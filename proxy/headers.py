"""Which headers cross the proxy, in each direction.

Requests: everything the client sent goes upstream untouched (auth included), except hop-by-hop
headers (RFC 9110 §7.6.1, and any named in ``Connection``), ``Host`` and ``Content-Length``
(recomputed). ``x-prefixgate-*`` never cross either way. Responses: the upstream's headers minus
hop-by-hop ones; ``Content-Encoding`` and ``Content-Length`` stay, unless the relay edits the
stream or the status has no body (1xx, 204, 304: :func:`has_no_body`; uvicorn aborts a 304
whose length disagrees); an answer to ``HEAD`` keeps it. It never reads or logs header values:
API keys pass through as opaque bytes. See docs/request-path.md (headers and bodies).
"""

from __future__ import annotations

from collections.abc import Iterable

RawHeaders = list[tuple[bytes, bytes]]

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
    }
)
OWN_PREFIX = b"x-prefixgate-"
_REQUEST_DROP = HOP_BY_HOP | {b"host", b"content-length", b"expect"}


def _connection_tokens(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    names: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            names.update(tok.strip().lower() for tok in value.split(b",") if tok.strip())
    return names


def request_headers(headers: RawHeaders, *, force_identity: bool = False) -> RawHeaders:
    """Headers to send upstream. ``force_identity`` asks for an uncompressed body (used
    when the relay must edit the stream). ``x-prefixgate-*`` headers (the admin token, for
    one) are the proxy's own and never leave it."""
    drop = _REQUEST_DROP | _connection_tokens(headers)
    if force_identity:
        drop = drop | {b"accept-encoding"}
    out = [
        (name, value)
        for name, value in headers
        if name.lower() not in drop and not name.lower().startswith(OWN_PREFIX)
    ]
    if force_identity:
        out.append((b"accept-encoding", b"identity"))
    return out


def has_no_body(status: int) -> bool:
    """True for statuses whose responses end after the headers, whatever they declare."""
    return status < 200 or status in (204, 304)


def response_headers(headers: RawHeaders, *, keep_length: bool = True, status: int = 200) -> RawHeaders:
    """Headers to send the client for an upstream response with ``status``."""
    drop = HOP_BY_HOP | _connection_tokens(headers)
    if not keep_length or has_no_body(status):
        drop = drop | {b"content-length"}
    out = []
    for name, value in headers:
        name = name.lower()
        if name not in drop and not name.startswith(OWN_PREFIX):  # ours are added by the relay
            out.append((name, value))
    return out
