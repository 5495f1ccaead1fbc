"""The proxy's own error responses, in the shape of the provider the client talks to.

A 413/502/504 made by the proxy parses as that provider's SDK error (OpenAI, Anthropic or
Gemini shape, built by :mod:`analyzer.wire`) and carries ``x-prefixgate-error: <kind>`` so it is
never mistaken for the upstream's. Every failure goes on its record in one place,
:func:`record_failure`; :func:`broken_off` names an upstream body that broke off while read.
Errors the upstream itself returns are not built here: they are relayed verbatim.
See docs/request-path.md (the proxy's own errors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import orjson
from starlette.responses import Response

from analyzer.wire import anthropic_error, gemini_error, openai_error
from proxy.endpoints import ANTHROPIC, GEMINI

if TYPE_CHECKING:
    from proxy.accounting.records import RequestRecord


@dataclass(frozen=True, slots=True)
class ProxyError:
    """One of the proxy's own errors: ``kind`` is recorded as ``RequestRecord.error`` and sent as
    ``x-prefixgate-error``; ``retry_after`` (seconds) is sent as Retry-After (the SDKs wait that
    long, then retry)."""

    status: int
    kind: str
    openai_type: str
    anthropic_type: str
    retry_after: int | None = None


BAD_PATH = ProxyError(400, "bad_path", "invalid_request_error", "invalid_request_error")
NOT_FOUND = ProxyError(404, "not_found", "invalid_request_error", "not_found_error")
BAD_REWRITE_MODE = ProxyError(400, "bad_rewrite_mode", "invalid_request_error", "invalid_request_error")
CLIENT_GONE = ProxyError(499, "client_disconnected", "invalid_request_error", "invalid_request_error")
BODY_TOO_LARGE = ProxyError(413, "body_too_large", "invalid_request_error", "request_too_large")
UPSTREAM_UNREACHABLE = ProxyError(502, "upstream_unreachable", "api_error", "api_error")
UPSTREAM_PROTOCOL = ProxyError(502, "upstream_protocol_error", "api_error", "api_error")
UPSTREAM_TIMEOUT = ProxyError(504, "upstream_timeout", "timeout", "timeout_error")
#: The upstream's body broke off.
UPSTREAM_READ_ERROR = ProxyError(502, "upstream_read_error", "api_error", "api_error")
#: The proxy stopped mid-request.
SHUTDOWN_CUT = ProxyError(503, "shutdown_cut", "api_error", "api_error")
# every pooled upstream connection stayed busy for --pool-timeout: the proxy's own limit, not the upstream's timeout
POOL_EXHAUSTED = ProxyError(503, "pool_exhausted", "api_error", "overloaded_error", retry_after=1)
#: every replica of a pool (several base_urls) is out of rotation: the health checks bring them back
NO_HEALTHY_REPLICA = ProxyError(502, "no_healthy_replica", "api_error", "api_error", retry_after=1)


def broken_off(exc: BaseException) -> ProxyError:
    """The error of an upstream body that broke off while it was read (a transport error or
    ``OSError``): ``upstream_timeout`` on a timeout, else ``upstream_read_error``."""
    return UPSTREAM_TIMEOUT if isinstance(exc, httpx.TimeoutException) else UPSTREAM_READ_ERROR


def record_failure(
    record: RequestRecord, error: ProxyError, *, keep_status: bool = False, keep_error: bool = False
) -> None:
    """The one place a failure goes on a record: ``record.status`` = ``error.status`` (unless
    ``keep_status``: the upstream's status already went to the client, or is the call's own
    answer) and ``record.error`` = ``error.kind`` (unless ``keep_error`` and the record already
    has one: the first failure stays)."""
    if not keep_status:
        record.status = error.status
    if not (keep_error and record.error):
        record.error = error.kind


def error_body(provider: str, error: ProxyError, message: str) -> bytes:
    message = f"prefixgate: {message}"
    if provider == ANTHROPIC:
        return orjson.dumps(anthropic_error(error.anthropic_type, message))
    if provider == GEMINI:
        return orjson.dumps(gemini_error(error.status, message))
    return orjson.dumps(openai_error(message, error.openai_type, code=error.kind, code_before_param=True))


def error_response(
    provider: str, error: ProxyError, message: str, extra_headers: dict[str, str] | None = None
) -> Response:
    headers = {"x-prefixgate-error": error.kind, **(extra_headers or {})}
    if error.retry_after is not None:
        headers["retry-after"] = str(error.retry_after)
    return Response(
        error_body(provider, error, message),
        status_code=error.status,
        headers=headers,
        media_type="application/json",
    )
