"""The provider's own word on a cache miss: Anthropic's ``diagnostics``.

Ask (:meth:`ProviderDiagnostics.ask`, safe / aggressive only): splice
``"diagnostics": {"previous_message_id": ID}`` into a Messages body that has none, ID the
tenant's response on the closest prefix (else ``null``, opting in). Remember
(:meth:`ProviderDiagnostics.enrich`): answers' ids per chain hash, bounded, in this process only.
Read (:func:`read_reason`, :class:`Peek`): the answer's ``cache_miss_reason`` → :class:`Reason`
for the record and the ``x-prefixgate-provider-miss-reason`` header; an unknown shape is
:data:`UNKNOWN_SHAPE`. It sends nothing, prices nothing and never raises on a body or an answer.
See docs/providers.md (cache diagnostics) and docs/money.md (the provider's own miss reason).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from proxy.endpoints import ANTHROPIC, Kind
from proxy.sse import SSEParser
from proxy.usage_tap import Decoder

if TYPE_CHECKING:
    from proxy.body_analysis import BodyAnalysis
    from proxy.exchange import Exchange
    from proxy.upstream_urls import Target

REWRITE_ID = "provider-diagnostics"
HEADER = "x-prefixgate-provider-miss-reason"
UNKNOWN_SHAPE = "unknown_shape"
# The SDK's CacheMissReason union: type → whether it carries cache_missed_input_tokens.
TYPES = {
    "model_changed": True,
    "system_changed": True,
    "tools_changed": True,
    "messages_changed": True,
    "previous_message_not_found": False,
    "unavailable": False,
}
#: Chain hashes remembered per tenant.
PER_TENANT = 512
MAX_TENANTS = 10_000
#: How much of a JSON answer is read ahead for the header (beyond it, no header), and of a stream
#: up to its first complete event, which its head waits for at most MAX_SSE_WAIT_S (then it goes
#: out without the header).
MAX_JSON_PEEK = 4 * 1024 * 1024
MAX_SSE_PEEK = 64 * 1024
MAX_SSE_WAIT_S = 0.5


@dataclass(frozen=True, slots=True)
class Reason:
    """A miss reason: ``type`` one of :data:`TYPES` or :data:`UNKNOWN_SHAPE`; ``tokens`` its
    ``cache_missed_input_tokens`` (None: the type carries none)."""

    type: str
    tokens: int | None = None


def read_reason(diagnostics: Any) -> Reason | None:
    """The answer's ``diagnostics`` object as sent → its reason; None when there is none
    (no object, or ``cache_miss_reason`` null). A type that is a list or object is an unknown
    shape (never a TypeError)."""
    if diagnostics is None:
        return None
    if not isinstance(diagnostics, dict) or "cache_miss_reason" not in diagnostics:
        return Reason(UNKNOWN_SHAPE)
    reason = diagnostics["cache_miss_reason"]
    if reason is None:
        return None
    kind = reason.get("type") if isinstance(reason, dict) else None
    if not isinstance(kind, str) or kind not in TYPES:
        return Reason(UNKNOWN_SHAPE)
    if not TYPES[kind]:
        return Reason(kind)
    tokens = reason.get("cache_missed_input_tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        return Reason(UNKNOWN_SHAPE)
    return Reason(kind, tokens)


def header_value(reason: Reason | None) -> str | None:
    """``TYPE; tokens=N`` (``TYPE`` alone when it carries no tokens); None: no header."""
    if reason is None:
        return None
    return reason.type if reason.tokens is None else f"{reason.type}; tokens={reason.tokens}"


def _messages(target: Target | None) -> bool:
    return (
        target is not None
        and target.provider == ANTHROPIC
        and target.rules == ANTHROPIC
        and target.endpoint.kind == Kind.MESSAGES
    )


def names_previous(exchange: Exchange) -> bool:
    """The request sent upstream names a previous message (ours or the client's): its answer
    carries a miss reason worth a header."""
    analysis = exchange.analysis
    body = analysis.body if analysis is not None else None
    diag = body.get("diagnostics") if isinstance(body, dict) else None
    return (
        isinstance(diag, dict)
        and isinstance(diag.get("previous_message_id"), str)
        and _messages(exchange.target)
    )


class ResponseMemory:
    """Per tenant: chain hash → the most recent response id whose request had that prefix,
    and the latest response id per upstream (bounded, see the module docstring)."""

    def __init__(self, per_tenant: int = PER_TENANT, max_tenants: int = MAX_TENANTS) -> None:
        if per_tenant < 1 or max_tenants < 1:
            raise ValueError("ResponseMemory bounds must be positive")
        self.per_tenant, self.max_tenants = per_tenant, max_tenants
        self._tenants: OrderedDict[str, tuple[OrderedDict[bytes, str], dict[str, str]]] = OrderedDict()

    def __len__(self) -> int:
        return sum(len(hashes) for hashes, _ in self._tenants.values())

    def remember(self, tenant: str, scope: str, hashes: tuple[bytes, ...], response_id: str) -> None:
        entry = self._tenants.get(tenant)
        if entry is None:
            entry = self._tenants[tenant] = (OrderedDict(), {})
        self._tenants.move_to_end(tenant)
        by_hash, latest = entry
        for h in hashes[-self.per_tenant :]:
            by_hash[h] = response_id
            by_hash.move_to_end(h)
        while len(by_hash) > self.per_tenant:
            by_hash.popitem(last=False)
        latest[scope] = response_id
        while len(self._tenants) > self.max_tenants:
            self._tenants.popitem(last=False)

    def closest(self, tenant: str, scope: str, hashes: tuple[bytes, ...]) -> str | None:
        """The most recent response on the deepest prefix shared with ``hashes``; else the
        tenant's latest through ``scope``; None when the tenant has none."""
        entry = self._tenants.get(tenant)
        if entry is None:
            return None
        by_hash, latest = entry
        for h in reversed(hashes):
            found = by_hash.get(h)
            if found is not None:
                return found
        return latest.get(scope)


def splice(raw: bytes, previous: str | None) -> bytes:
    """``raw`` (a JSON object) with ``"diagnostics":{"previous_message_id":…}`` first; every other byte kept."""
    start = raw.index(b"{") + 1
    sep = b"" if raw[start:].lstrip().startswith(b"}") else b","
    field = b'"diagnostics":' + orjson.dumps({"previous_message_id": previous})
    return raw[:start] + field + sep + raw[start:]


class ProviderDiagnostics:
    """The gate's part: asks for the provider's miss reason and remembers response ids."""

    def __init__(self, memory: ResponseMemory | None = None) -> None:
        self.memory = memory or ResponseMemory()

    def ask(
        self, target: Target | None, tenant: str, raw: bytes, analysis: BodyAnalysis
    ) -> tuple[bytes, str | None]:
        """(the body to send, :data:`REWRITE_ID` when ``diagnostics`` was added, else None).
        Only for an analysed Anthropic Messages body without a ``diagnostics`` key; the
        analysis's parsed body gets the same key (it describes what goes upstream)."""
        body = analysis.body
        if (
            not _messages(target)
            or not analysis.analysed
            or not isinstance(body, dict)
            or "diagnostics" in body
        ):
            return raw, None
        hashes = analysis.chain.hashes if analysis.chain is not None else ()
        assert target is not None
        previous = self.memory.closest(tenant, target.upstream or ANTHROPIC, hashes)
        out = splice(raw, previous)
        body["diagnostics"] = {"previous_message_id": previous}
        return out, REWRITE_ID

    def enrich(self, exchange: Exchange) -> None:
        """Recorder enricher: remembers a finished Anthropic answer's id under its request's chain."""
        record, analysis = exchange.record, exchange.analysis
        rid = record.response_id
        if not isinstance(rid, str) or not rid or record.status != 200 or not _messages(exchange.target):
            return
        if analysis is None or analysis.chain is None:
            return
        self.memory.remember(record.tenant, record.upstream or ANTHROPIC, analysis.chain.hashes, rid)


class Peek:
    """Reads the head of an answer for its ``diagnostics``: :meth:`feed` the raw chunks until
    ``done``, then :meth:`end` if the body ended first; :attr:`reason` is what was found. Too long
    (as sent, or decoded: a small compressed answer may decode to far more than the bound) or
    unreadable: done, no header."""

    def __init__(self, content_type: str, encoding: str | None) -> None:
        self.stream = "text/event-stream" in content_type
        self._decoder = Decoder(encoding.encode() if encoding else None)
        self._sse = SSEParser() if self.stream else None
        self._parts: list[bytes] = []
        self._size = 0
        self._decoded = 0
        self.done = not self._decoder.ok or not (self.stream or "json" in content_type)
        self.reason: Reason | None = None

    def feed(self, chunk: bytes) -> None:
        if self.done:
            return
        self._size += len(chunk)
        data = self._decoder.decode(chunk)
        self._decoded += len(data)
        limit = MAX_SSE_PEEK if self.stream else MAX_JSON_PEEK
        if not self._decoder.ok or self._size > limit or self._decoded > limit:
            self.done = True
            return
        if self._sse is None:
            self._parts.append(data)
            return
        for event in self._sse.feed(data):
            if not event.data:
                continue
            self.done = True
            try:
                doc = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                return
            message = (
                doc.get("message") if isinstance(doc, dict) and doc.get("type") == "message_start" else None
            )
            if isinstance(message, dict):
                self.reason = read_reason(message.get("diagnostics"))
            return

    def end(self) -> None:
        """The body ended within the bound: a JSON answer is read whole."""
        if self.done or self._sse is not None:
            self.done = True
            return
        self.done = True
        try:
            doc = orjson.loads(b"".join(self._parts))
        except orjson.JSONDecodeError:
            return
        if isinstance(doc, dict):
            self.reason = read_reason(doc.get("diagnostics"))
