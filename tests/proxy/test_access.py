from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from proxy.access import AdminAccess


async def ok(request):
    return PlainTextResponse("ok " + request.headers.get("authorization", "-"))


def client(token: str | None) -> TestClient:
    paths = [
        "/prefixgate/stats",
        "/prefixgate/health",
        "/prefixgate/static/dashboard.js",
        "/prefixgate/dashboard",
        "/v1/models",
    ]
    app = Starlette(routes=[Route(p, ok) for p in paths])
    return TestClient(AdminAccess(app, token))


@pytest.mark.parametrize("path", ["/prefixgate/stats", "/prefixgate/dashboard"])
def test_admin_paths_need_the_token(path):
    c = client("s3cret-admin")
    denied = c.get(path)
    assert denied.status_code == 401 and denied.headers["www-authenticate"].startswith("Bearer")
    assert denied.json()["error"]["type"] == "unauthorized"
    assert c.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.get(path + "?token=wrong").status_code == 401
    assert c.get(path, headers={"Authorization": "Bearer s3cret-admin"}).status_code == 200
    assert c.get(path, headers={"x-prefixgate-admin-token": "s3cret-admin"}).status_code == 200
    assert c.get(path + "?token=s3cret-admin").status_code == 200


def test_open_paths_and_proxied_traffic_untouched():
    c = client("s3cret-admin")
    assert c.get("/prefixgate/health").status_code == 200
    assert c.get("/prefixgate/static/dashboard.js").status_code == 200
    r = c.get("/v1/models", headers={"Authorization": "Bearer sk-provider-key"})
    assert r.status_code == 200 and r.text == "ok Bearer sk-provider-key"


def test_no_token_configured_means_no_check():
    assert client(None).get("/prefixgate/stats").status_code == 200
