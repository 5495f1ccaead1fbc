"""The proxy's own error responses, in the shape of the provider the client talks to.

Clients use that provider's SDK, so a 413/502/504 made by the proxy must parse as that
SDK's error: OpenAI ``{"error": {"message", "type", "code", "param"}}``, Anthropic
``{"type": "error", "error": {"type", "message"}}``, Gemini
``{"error": {"code", "message", "status"}}`` (all built by :mod:`analyzer.wire`).
Every proxy-made error also carries ``x-prefixgate-error: <kind>`` so it is never
mistaken for the upstream's.

Errors the upstream itself returns are not built here: they are relayed verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from starlette.responses import Response

from analyzer.wire import anthropic_error, gemini_error, openai_error
from proxy.routing import ANTHROPIC, GEMINI


@dataclass(frozen=True, slots=True)
class ProxyError:
    status: int
    kind: str  # recorded as RequestRecord.error and sent as x-prefixgate-error
    openai_type: str
    anthropic_type: str


BAD_PATH = ProxyError(400, "bad_path", "invalid_request_error", "invalid_request_error")
NOT_FOUND = ProxyError(404, "not_found", "invalid_request_error", "not_found_error")
BAD_REWRITE_MODE = ProxyError(400, "bad_rewrite_mode", "invalid_request_error", "invalid_request_error")  # x-prefixgate-rewrite
CLIENT_GONE = ProxyError(499, "client_disconnected", "invalid_request_error", "invalid_request_error")
BODY_TOO_LARGE = ProxyError(413, "body_too_large", "invalid_request_error", "request_too_large")
UPSTREAM_UNREACHABLE = ProxyError(502, "upstream_unreachable", "api_error", "api_error")
UPSTREAM_PROTOCOL = ProxyError(502, "upstream_protocol_error", "api_error", "api_error")
UPSTREAM_TIMEOUT = ProxyError(504, "upstream_timeout", "timeout", "timeout_error")
SHUTDOWN_CUT = ProxyError(503, "shutdown_cut", "api_error", "api_error")  # the proxy stopped mid-request


def error_body(provider: str, error: ProxyError, message: str) -> bytes:
    message = f"prefixgate: {message}"
    if provider == ANTHROPIC:
        return orjson.dumps(anthropic_error(error.anthropic_type, message))
    if provider == GEMINI:
        return orjson.dumps(gemini_error(error.status, message))
    return orjson.dumps(openai_error(message, error.openai_type, code=error.kind, code_before_param=True))


def error_response(provider: str, error: ProxyError, message: str, extra_headers: dict[str, str] | None = None) -> Response:
    headers = {"x-prefixgate-error": error.kind, **(extra_headers or {})}
    return Response(error_body(provider, error, message), status_code=error.status, headers=headers, media_type="application/json")
