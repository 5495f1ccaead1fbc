"""What the proxy learns from a request body before forwarding it.

:func:`analyse` parses the body (JSON object, else "unanalysed"), reads ``model`` and
``stream``, cuts it into segments (:mod:`analyzer.segments`) and hashes the chain
(:mod:`analyzer.prefix`, rooted at provider + model). :func:`with_stream_usage` returns
the body to forward when the proxy must ask for OpenAI's usage chunk itself.

Never raises on a body: anything that does not parse is forwarded as it came. This module
does not touch the store or the network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from analyzer.prefix import Chain, chain, root_hash
from analyzer.segments import Segment, segments_for
from proxy.routing import OPENAI

# Routes whose prefixes a provider caches; only these are recorded in the store.
CACHING_ROUTES = ("/chat/completions", "/responses", "/completions", "/messages")
_USAGE_OPT_ROUTES = ("/chat/completions", "/completions")


@dataclass(slots=True)
class Analysis:
    analysed: bool  # False: the body was not a JSON object (forwarded untouched)
    body: Any = None  # the parsed body, when analysed
    model: str | None = None
    stream: bool = False
    segments: list[Segment] = field(default_factory=list)
    chain: Chain | None = None
    caches: bool = False  # the route has prompt caching (the chain goes to the store)

    @property
    def total_bytes(self) -> int:
        return self.chain.bytes_at(len(self.chain)) if self.chain else 0


def analyse(provider: str, route: str, raw: bytes) -> Analysis:
    if not raw.strip():
        return Analysis(analysed=True)  # nothing to parse (GET /v1/models and the like)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return Analysis(analysed=False)
    if not isinstance(body, dict):
        return Analysis(analysed=False)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    stream = body.get("stream") is True
    route = route.rstrip("/")
    caches = route.endswith(CACHING_ROUTES)
    segments = segments_for(provider, route, body)
    hashed = chain(segments, root_hash(provider, model or "")) if segments else None
    return Analysis(True, body, model, stream, segments, hashed, caches and bool(segments))


def needs_stream_usage(provider: str, route: str, analysis: Analysis) -> bool:
    """True when an OpenAI stream would carry no usage unless the proxy asks for it."""
    if provider != OPENAI or not analysis.stream or not route.rstrip("/").endswith(_USAGE_OPT_ROUTES):
        return False
    opts = analysis.body.get("stream_options")
    return not (isinstance(opts, dict) and opts.get("include_usage") is True)


def with_stream_usage(raw: bytes, analysis: Analysis) -> bytes:
    """The body with ``stream_options.include_usage = true``.

    When the client sent no ``stream_options`` the field is spliced in after the opening
    brace, so every other byte stays as the client wrote it; otherwise the body is
    re-serialised.
    """
    body = analysis.body
    if "stream_options" not in body:
        start = raw.index(b"{") + 1
        rest = raw[start:].lstrip()
        sep = b"" if rest.startswith(b"}") else b","
        return raw[:start] + b'"stream_options":{"include_usage":true}' + sep + raw[start:]
    opts = body.get("stream_options")
    merged = dict(opts) if isinstance(opts, dict) else {}
    merged["include_usage"] = True
    return orjson.dumps({**body, "stream_options": merged})
