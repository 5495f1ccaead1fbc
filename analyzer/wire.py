"""Wire shapes that three servers write: OpenAI, Anthropic and Gemini error bodies, and SSE frames.

Written once for the proxy (:mod:`proxy.errors`), the upstream emulator and the local engine's
server (:mod:`kvcache.server`): OpenAI ``{"error": {message, type, param, code}}`` (``param``
and ``code`` always present), Anthropic ``{"type": "error", "error": {...}}`` (+ ``request_id``),
Gemini ``{"error": {code, message, status}}`` (gRPC status name), and ``data:`` / ``event:``
frames plus OpenAI's ``data: [DONE]``.

It does NOT choose a status, send or parse anything (see :mod:`proxy.sse`), and imports nothing
first-party: it is the one ``analyzer`` module ``kvcache`` may import (tests/test_layout.py).
"""

from __future__ import annotations

from typing import Any

import orjson

SSE_MEDIA_TYPE = "text/event-stream"
SSE_DONE = b"data: [DONE]\n\n"


def sse_data(payload: Any) -> bytes:
    """One ``data:`` event: the payload as compact JSON."""
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def sse_event(name: str, payload: Any) -> bytes:
    """One named event (Anthropic, the Responses API): ``event:`` line, then ``data:``."""
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


def openai_error_type(status: int) -> str:
    """OpenAI's ``type`` for a status: ``server_error`` from 500 up, else ``invalid_request_error``."""
    return "server_error" if status >= 500 else "invalid_request_error"


def openai_error(
    message: str,
    type: str,
    *,
    param: str | None = None,
    code: str | None = None,
    code_before_param: bool = False,
) -> dict[str, Any]:
    """OpenAI's error body. ``code_before_param`` keeps the proxy's own errors byte for byte as
    it has always sent them (the key order differs; clients parse either)."""
    tail = {"code": code, "param": param} if code_before_param else {"param": param, "code": code}
    return {"error": {"message": message, "type": type, **tail}}


def anthropic_error(type: str, message: str, *, request_id: str | None = None) -> dict[str, Any]:
    """Anthropic's error body; ``request_id`` only when given."""
    body: dict[str, Any] = {"type": "error", "error": {"type": type, "message": message}}
    if request_id:
        body["request_id"] = request_id
    return body


GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def gemini_error(status: int, message: str) -> dict[str, Any]:
    """Google's error body for HTTP ``status``."""
    name = GEMINI_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    return {"error": {"code": status, "message": message, "status": name}}
