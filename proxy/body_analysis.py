"""What the proxy learns from a request body before forwarding it: :class:`BodyAnalysis`.

:func:`analyse` parses the body (a JSON object, else "unanalysed"), reads ``model`` and
``stream`` (for Gemini the path's win), cuts it into segments and hashes the chain rooted at
upstream name + model (two upstreams never share a chain). :func:`needs_stream_usage` /
:func:`with_stream_usage` ask an OpenAI stream for its usage chunk. Never raises on a body:
anything unparsable is forwarded as it came. It does not look at the path, the store or the
network (the route's facts come from the target's :class:`~proxy.endpoints.Endpoint`).
See docs/request-path.md (segments and the prefix chain).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from analyzer.prefix import Chain, chain, root_hash
from analyzer.segments import Segment, segments_for
from proxy.endpoints import Endpoint
from proxy.upstream_urls import Target

#: A body over this many bytes is parsed (and rewritten) off the event loop, so other requests keep flowing.
BIG_BODY = 1024 * 1024


@dataclass(slots=True)
class BodyAnalysis:
    """``analysed`` False: the body was not a JSON object (forwarded untouched). ``caches``: the
    endpoint has prompt caching and the body has segments (the chain goes to the store)."""

    analysed: bool
    body: Any = None
    model: str | None = None
    stream: bool = False
    segments: list[Segment] = field(default_factory=list)
    chain: Chain | None = None
    caches: bool = False

    @property
    def total_bytes(self) -> int:
        return self.chain.bytes_at(len(self.chain)) if self.chain else 0


def analyse(target: Target, raw: bytes) -> BodyAnalysis:
    if not raw.strip():
        return BodyAnalysis(analysed=True)  # nothing to parse (GET /v1/models and the like)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return BodyAnalysis(analysed=False)
    if not isinstance(body, dict):
        return BodyAnalysis(analysed=False)
    model = target.model or (body.get("model") if isinstance(body.get("model"), str) else None)
    stream = target.endpoint.stream or body.get("stream") is True
    segments = segments_for(target.provider, target.route.rstrip("/"), body)
    hashed = chain(segments, root_hash(target.upstream, model or "")) if segments else None
    return BodyAnalysis(
        True, body, model, stream, segments, hashed, target.endpoint.caches and bool(segments)
    )


def needs_stream_usage(endpoint: Endpoint, analysis: BodyAnalysis) -> bool:
    """True when an OpenAI stream would carry no usage unless the proxy asks for it."""
    if not endpoint.ask_stream_usage or not analysis.stream:
        return False
    opts = analysis.body.get("stream_options")
    return not (isinstance(opts, dict) and opts.get("include_usage") is True)


def with_stream_usage(raw: bytes, analysis: BodyAnalysis) -> bytes:
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
