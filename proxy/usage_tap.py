"""Usage numbers from a response as it is relayed (a tee, never in the client's path).

:func:`tap_for` picks the tap for one response (only a ``POST`` to a billable endpoint is
read) and says whether the relay edits the stream. :class:`JSONTap` parses a plain body's
bounded, decoded copy; :class:`SSETap` reads each provider's usage events as they pass and names
the usage chunk to drop in edit mode. Each tap also keeps the answer's ``response_id`` and
Anthropic's ``diagnostics``. Taps never raise into the relay (unreadable: ``usage = None``) and
decide nothing about what the client sees beyond that one keep/drop answer.
See docs/request-path.md (the relay) and docs/money.md (usage: the one definition).
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

import orjson

from analyzer.usage import (
    Usage,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    merge_anthropic_stream,
)
from proxy.sse import Event, SSEParser

if TYPE_CHECKING:
    import httpx

    from proxy.exchange import Exchange

MAX_JSON_COPY = 64 * 1024 * 1024
_RESPONSES_DONE = ("response.completed", "response.incomplete", "response.failed")


def usage_from_body(kind: str, body: Any) -> Usage | None:
    if kind == "gemini":
        return _gemini_usage(body)
    if not isinstance(body, dict):
        return None
    block = body.get("usage")
    if not isinstance(block, dict):
        return None
    if kind == "anthropic":
        return from_anthropic(block)
    if kind == "responses":
        return from_openai_responses(block)
    return from_openai_chat(block)


def _gemini_usage(body: Any) -> Usage | None:
    """``usageMetadata`` of a Gemini response, or of the last chunk that has one in the JSON
    array ``streamGenerateContent`` answers without ``alt=sse``."""
    chunks = body if isinstance(body, list) else [body]
    for chunk in reversed(chunks):
        block = chunk.get("usageMetadata") if isinstance(chunk, dict) else None
        if isinstance(block, dict):
            return from_gemini(block)
    return None


class Decoder:
    """Undoes gzip/deflate for the tee's copy; ``ok`` is False for encodings it cannot read."""

    def __init__(self, encoding: bytes | None) -> None:
        enc = (encoding or b"identity").strip().lower()
        self.ok = True
        self._z = None
        if enc in (b"gzip", b"x-gzip"):
            self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif enc == b"deflate":
            self._z = zlib.decompressobj()
        elif enc != b"identity":
            self.ok = False

    def decode(self, chunk: bytes) -> bytes:
        if not self.ok:
            return b""
        if self._z is None:
            return chunk
        try:
            return self._z.decompress(chunk)
        except zlib.error:
            self.ok = False
            return b""


class JSONTap:
    """``enabled=False`` (a body that is not JSON: files, audio) keeps no copy at all."""

    def __init__(self, kind: str, encoding: bytes | None = None, enabled: bool = True) -> None:
        self.kind = kind
        self._decoder = Decoder(encoding)
        self._decoder.ok = self._decoder.ok and enabled
        self._parts: list[bytes] = []
        self._size = 0
        self.response_id: str | None = None
        self.diagnostics: Any = None

    def feed(self, chunk: bytes) -> None:
        if self._size > MAX_JSON_COPY or not self._decoder.ok:
            return
        data = self._decoder.decode(chunk)
        self._size += len(data)
        self._parts.append(data)

    def usage(self) -> Usage | None:
        if not self._decoder.ok or self._size > MAX_JSON_COPY:
            return None
        try:
            doc = orjson.loads(b"".join(self._parts))
        except (orjson.JSONDecodeError, ValueError):
            return None
        if isinstance(doc, dict):
            rid = doc.get("id")
            self.response_id = rid if isinstance(rid, str) else None
            self.diagnostics = doc.get("diagnostics")
        return usage_from_body(self.kind, doc)


class SSETap:
    def __init__(self, kind: str, encoding: bytes | None = None, strip_usage_chunk: bool = False) -> None:
        self.kind = kind
        self.strip_usage_chunk = strip_usage_chunk
        self._decoder = Decoder(encoding)
        self._parser = SSEParser()
        self._usage: Usage | None = None
        self._anthropic_start: dict | None = None
        self._anthropic_delta: dict | None = None
        self.response_id: str | None = None
        self.diagnostics: Any = None

    def feed(self, chunk: bytes) -> None:
        """Tee mode: look at the bytes, forward nothing."""
        for event in self._parser.feed(self._decoder.decode(chunk)):
            self.keep(event)

    def events(self, chunk: bytes) -> list[Event]:
        """Edit mode (identity encoding only): the complete events in ``chunk``."""
        return self._parser.feed(chunk)

    def flush(self) -> bytes:
        return self._parser.flush()

    def keep(self, event: Event) -> bool:
        """Reads usage from ``event``; False when the client must not see it."""
        try:
            return self._read(event)
        except (orjson.JSONDecodeError, ValueError, TypeError, AttributeError):
            return True

    def _read(self, event: Event) -> bool:
        data = event.data
        if self.kind == "chat":
            if '"usage"' not in data or '"usage":null' in data:
                return True
            obj = orjson.loads(data)
            block = obj.get("usage") if isinstance(obj, dict) else None
            if not isinstance(block, dict):
                return True
            self._usage = from_openai_chat(block)
            if isinstance(obj.get("id"), str):
                self.response_id = obj["id"]
            return not (self.strip_usage_chunk and obj.get("choices") == [])
        if self.kind == "gemini":  # every chunk may carry usageMetadata, the last one the totals
            if '"usageMetadata"' in data:
                obj = orjson.loads(data)
                usage = _gemini_usage(obj)
                if usage is not None:
                    self._usage = usage
            return True
        if self.kind == "responses":
            if event.event in _RESPONSES_DONE or any(f'"{t}"' in data for t in _RESPONSES_DONE):
                obj = orjson.loads(data)
                response = obj.get("response") if isinstance(obj, dict) else None
                usage = usage_from_body("responses", response)
                if usage is not None:
                    self._usage = usage
                if isinstance(response, dict) and isinstance(response.get("id"), str):
                    self.response_id = response["id"]
            return True
        if event.event == "message_start" or '"message_start"' in data[:40]:
            obj = orjson.loads(data)
            message = obj.get("message") or {}
            if isinstance(message.get("usage"), dict):
                self._anthropic_start = message["usage"]
            if isinstance(message.get("id"), str):
                self.response_id = message["id"]
            self.diagnostics = message.get("diagnostics")
        elif event.event == "message_delta" or '"message_delta"' in data[:40]:
            obj = orjson.loads(data)
            if isinstance(obj.get("usage"), dict):
                self._anthropic_delta = obj["usage"]
        return True

    def usage(self) -> Usage | None:
        if self.kind == "anthropic":
            if self._anthropic_start is None and self._anthropic_delta is None:
                return None
            return merge_anthropic_stream(self._anthropic_start, self._anthropic_delta)
        return self._usage


Tap = JSONTap | SSETap


def tap_for(exchange: Exchange, response: httpx.Response) -> tuple[Tap, bool]:
    """The usage tap for this response, and whether the relay edits the stream (drops the
    usage chunk the proxy asked for: only an identity-encoded event stream can be edited)."""
    endpoint = exchange.target.endpoint  # type: ignore[union-attr]  # a relayed exchange is routed
    kind = endpoint.usage
    encoding = response.headers.get("content-encoding", "").encode() or None
    content_type = response.headers.get("content-type", "")
    if not (exchange.record.method == "POST" and endpoint.billable):
        return JSONTap(kind, encoding, enabled=False), False  # retrievals would count usage twice
    if "text/event-stream" in content_type:
        edit = exchange.ask_usage and encoding in (None, b"identity")
        return SSETap(kind, encoding, strip_usage_chunk=edit), edit
    return JSONTap(kind, encoding, enabled="json" in content_type), False
