"""Admin access to ``/prefixgate/*``: an ASGI middleware checking the admin token.

With an admin token configured, every ``/prefixgate/`` path but ``/prefixgate/health`` (for
probes; no request data) and the dashboard's static files needs it, as ``Authorization: Bearer``,
``x-prefixgate-admin-token`` or ``?token=``, compared in constant time; else 401 with a JSON
error and ``WWW-Authenticate: Bearer``. Without a token the proxy serves loopback hosts only
(``ProxyConfig`` refuses the rest), so nothing is checked. Proxied traffic is never touched:
its ``Authorization`` is the client's provider key. See docs/dashboard.md, docs/configuration.md.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

ADMIN_PREFIX = "/prefixgate/"
OPEN_PATHS = frozenset({"/prefixgate/health"})
OPEN_PREFIXES = ("/prefixgate/static/",)  # the dashboard's own CSS/JS: code, no data


def token_from(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"x-prefixgate-admin-token" and value.strip():
            return value.decode("latin-1").strip()
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0] if values else None


class AdminAccess:
    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token and scope["type"] == "http":
            path = scope.get("path", "")
            if (
                path.startswith(ADMIN_PREFIX)
                and path.rstrip("/") not in OPEN_PATHS
                and not path.startswith(OPEN_PREFIXES)
            ):
                given = token_from(scope)
                if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                    await _unauthorized(send)
                    return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = b'{"error":{"type":"unauthorized","message":"/prefixgate/* needs the admin token (Authorization: Bearer or ?token=)"}}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="prefixgate"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
