"""``GET /prefixgate/kv``: the KV-cache calculator page, linked from the dashboard.

One self-contained HTML page (``static/kv.html``: CSS and JS inline, nothing from the internet)
whose JS repeats the arithmetic of :mod:`analyzer.kv` step for step; the presets are
:data:`analyzer.kv.PRESETS` themselves, written into the page when it is served, so the page and
``prefixgate kv`` cannot disagree. Rendered once per process; its Content-Security-Policy allows
exactly its own inline script and style (by hash).

It does no access control (:mod:`proxy.access` does) and shows no request data. See docs/kv.md.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import orjson
from starlette.requests import Request
from starlette.responses import Response

from analyzer import kv

TEMPLATE = Path(__file__).with_name("static") / "kv.html"
_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.DOTALL)


def presets() -> dict[str, object]:
    """What the page knows of the presets: the CLI's own table, and its aliases."""
    return {
        "presets": [
            {
                "name": p.name,
                "layers": p.layers,
                "kv_heads": p.kv_heads,
                "head_dim": p.head_dim,
                "query_heads": p.query_heads,
                "params": p.params,
                "source": p.source,
            }
            for p in sorted(kv.PRESETS.values(), key=lambda p: p.name)
        ],
        "aliases": dict(kv.ALIASES),
    }


@lru_cache(maxsize=1)
def render() -> tuple[bytes, str]:
    """(the page, its Content-Security-Policy). The presets' JSON is escaped so that it never ends
    the ``<script>`` it sits in."""
    data = orjson.dumps(presets()).decode().replace("</", "<\\/")
    html = TEMPLATE.read_text(encoding="utf-8").replace("{{PRESETS}}", data)
    hashes = {"script": [], "style": []}
    for tag, body in _INLINE.findall(html):
        hashes[tag].append(
            "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        )
    csp = (
        f"default-src 'none'; script-src {' '.join(hashes['script'])}; style-src {' '.join(hashes['style'])}; "
        "img-src 'self' data:; form-action 'self'; base-uri 'none'"
    )
    return html.encode(), csp


async def page(request: Request) -> Response:
    html, csp = render()
    return Response(
        html,
        media_type="text/html; charset=utf-8",
        headers={"cache-control": "no-store", "content-security-policy": csp},
    )
