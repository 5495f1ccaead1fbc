"""Where a Gemini request may be cut for an explicit cache, and the two bodies of a cut.

A :class:`Cut` is a segment boundary after which the rest of a ``generateContent`` body
continues a ``cachedContents`` entry exactly (``systemInstruction``, ``tools``, ``toolConfig``,
then the first ``n_contents`` contents; at least one content stays in the request).
:func:`cuts` lists them from the body's segments and prefix chain; a cut's ``digest`` hashes its
scope (tenant, upstream, model) and the exact JSON the cache would hold, so equal digests mean
the very same cached input. :func:`create_body` is the create's body, :func:`rewritten_body`
the request that references it. Pure: no decision (:mod:`~proxy.gemini_cache.tracker`), no call.
See docs/providers.md (Gemini explicit caching, automated).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from analyzer.prefix import Chain
from analyzer.segments import Segment
from analyzer.tokens import estimate_tokens

HEAD_FIELDS = ("systemInstruction", "system_instruction", "tools", "toolConfig", "tool_config")
_CONTENT = re.compile(r"^contents\[(\d+)\]")
_SPELLINGS = (("systemInstruction", "system_instruction"), ("toolConfig", "tool_config"))
#: A long conversation's longest cuts only.
MAX_CUTS = 64


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a cache may end: the leading ``n_contents`` contents it holds, the leading
    ``n_segments`` segments it covers (at least one), the ``digest`` of the scope and the exact
    JSON it holds (head fields, leading contents) and those segments' estimated ``tokens``."""

    n_contents: int
    n_segments: int
    digest: bytes
    tokens: int


def eligible(body: Any) -> bool:
    """A body the rewrite can handle: no cachedContent yet, contents a list of two or more
    (or one, behind a systemInstruction / tools), no field spelled both ways (which one the
    upstream reads would be its guess, not ours)."""
    if (
        not isinstance(body, dict)
        or body.get("cachedContent") is not None
        or body.get("cached_content") is not None
    ):
        return False
    if any(camel in body and snake in body for camel, snake in _SPELLINGS):
        return False
    contents = body.get("contents")
    return isinstance(contents, list) and len(contents) >= 1


def cuts(scope: str, body: dict[str, Any], segments: Sequence[Segment], chain: Chain) -> list[Cut]:
    """The body's cuts, longest first (empty when it is not :func:`eligible`, when its segments
    take a shape the cut does not follow or not Gemini's order, or when it holds a value orjson
    cannot write, e.g. an integer past 64 bits: never cached). ``scope`` names the tenant,
    upstream and model; it keys every digest. A cut after j contents leaves at least one in the
    request."""
    if not eligible(body) or len(segments) != len(chain):
        return []
    contents = body["contents"]
    # head: the segments before the first content's; ends: content j → the segments up to its end
    head = 0
    ends: dict[int, int] = {}
    for i, seg in enumerate(segments):
        if seg.kind == "message":
            match = _CONTENT.match(seg.path)
            if match is None:
                return []
            ends[int(match.group(1))] = i + 1
        elif ends:
            return []
        else:
            head = i + 1
    try:
        running = hashlib.blake2b(
            _framed(scope.encode("utf-8", "surrogatepass"))
            + _framed(orjson.dumps(_head(body), option=orjson.OPT_SORT_KEYS)),
            digest_size=16,
        )
        out: list[Cut] = []
        covered = head
        for j, content in enumerate(contents):
            if covered > 0 and (j == 0 or j - 1 in ends):
                at = running.copy()
                at.update(b"cut:%d" % j)
                out.append(Cut(j, covered, at.digest(), estimate_tokens(chain.bytes_at(covered))))
            if j + 1 < len(contents):
                running.update(_framed(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)))
            covered = ends.get(j, covered)
    except TypeError:
        return []
    out.reverse()
    return out[:MAX_CUTS]


def _framed(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _head(body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for camel, snake in (*_SPELLINGS, ("tools", "tools")):
        value = body.get(camel, body.get(snake))
        if value is not None:
            out[camel] = value
    return out


def create_body(body: dict[str, Any], cut: Cut, model: str, ttl_s: int) -> bytes:
    """``POST cachedContents``: the cached parts of ``body`` up to ``cut``."""
    doc: dict[str, Any] = {
        "model": model if model.startswith("models/") else f"models/{model}",
        **_head(body),
    }
    if cut.n_contents:
        doc["contents"] = body["contents"][: cut.n_contents]
    doc["ttl"] = f"{int(ttl_s)}s"
    doc["displayName"] = "prefixgate-auto"
    return orjson.dumps(doc)


def rewritten_body(body: dict[str, Any], cut: Cut, name: str) -> bytes:
    """``body`` referencing the cache ``name`` in place of the parts up to ``cut``."""
    doc = {k: v for k, v in body.items() if k not in HEAD_FIELDS and k != "contents"}
    doc["cachedContent"] = name
    doc["contents"] = body["contents"][cut.n_contents :]
    return orjson.dumps(doc)
