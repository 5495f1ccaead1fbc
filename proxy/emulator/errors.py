"""Error responses in each provider's own JSON shape (the shapes: :mod:`analyzer.wire`).

OpenAI: ``{"error": {"message", "type", "param", "code"}}``.
Anthropic: ``{"type": "error", "error": {"type", "message"}}`` (plus ``request_id``).
Gemini: ``{"error": {"code", "message", "status"}}``.
Both SDKs map these to their exception classes by HTTP status. Messages never contain
request credentials. This module does not decide *when* to fail.
"""

from __future__ import annotations

from starlette.responses import JSONResponse

from analyzer import wire

OPENAI_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _headers(status: int) -> dict[str, str]:
    return {"retry-after": "1"} if status in (429, 503, 529) else {}


def openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> JSONResponse:
    kind = "requests" if status == 429 else wire.openai_error_type(status)
    body = wire.openai_error(message, kind, param=param, code=code or OPENAI_CODES.get(status))
    return JSONResponse(body, status_code=status, headers=_headers(status))


def anthropic_error(status: int, message: str, request_id: str | None = None) -> JSONResponse:
    kind = ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return JSONResponse(
        wire.anthropic_error(kind, message, request_id=request_id),
        status_code=status,
        headers=_headers(status),
    )


def gemini_error(status: int, message: str) -> JSONResponse:
    return JSONResponse(wire.gemini_error(status, message), status_code=status, headers=_headers(status))


def provider_error(provider: str, status: int, message: str) -> JSONResponse:
    if provider == "gemini":
        return gemini_error(status, message)
    return anthropic_error(status, message) if provider == "anthropic" else openai_error(status, message)
