"""The provider's own cache-miss reason, counted per type, and how often prefixgate agrees.

Counts Anthropic's ``diagnostics.cache_miss_reason`` per type, in total and per provider:
requests, missed tokens, missed dollars (null, never $0, when none was priced), ``agrees``
(prefixgate's ``record.miss_reason`` names the same cause), ``diagnosed`` and ``prefixgate``.
The reason mapping lives in :func:`as_provider_type`; at most :data:`MAX_REASONS` types
(later ones as ``other``).

It keeps no request data and does no I/O. See docs/money.md.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from proxy.accounting.counters import Cap
from proxy.accounting.records import RequestRecord

MAX_REASONS = 32
#: prefixgate had no reason of its own
NONE = "none"
_SECTIONS = (
    ("tools", "tools_changed"),
    ("functions", "tools_changed"),
    ("system", "system_changed"),
    ("instructions", "system_changed"),
    ("messages", "messages_changed"),
    ("input", "messages_changed"),
)


def code_of(miss_reason: str | None) -> str | None:
    """prefixgate's reason code: the first ``;``-separated word of ``x-prefixgate-miss-reason``."""
    if not miss_reason:
        return None
    return miss_reason.split(";", 1)[0].strip() or None


def _section(miss_reason: str) -> str | None:
    for part in miss_reason.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key == "path":
            for prefix, kind in _SECTIONS:
                if value == prefix or value.startswith((prefix + "[", prefix + ".")):
                    return kind
    return None


def as_provider_type(miss_reason: str | None) -> str | None:
    """prefixgate's diagnosis in the provider's vocabulary (see the table above); None: no counterpart."""
    code = code_of(miss_reason)
    if code is None:
        return None
    if code == "model-changed":
        return "model_changed"
    if code in ("tools-changed", "tool-order"):
        return "tools_changed"
    if code == "system-changed":
        return "system_changed"
    if code.startswith("volatile-") or code == "json-key-order":
        where = _section(miss_reason or "")
        if where is not None:
            return where
        return "tools_changed" if code == "json-key-order" else None
    return None


def agrees(provider_type: str | None, miss_reason: str | None) -> bool:
    """prefixgate's diagnosis names the cause the provider gave."""
    return provider_type is not None and as_provider_type(miss_reason) == provider_type


class _Entry:
    __slots__ = ("requests", "missed_tokens", "missed_usd", "priced", "agrees", "diagnosed", "prefixgate")

    def __init__(self) -> None:
        self.requests = self.missed_tokens = self.priced = self.agrees = self.diagnosed = 0
        self.missed_usd = 0.0
        self.prefixgate: dict[str, int] = {}

    def add(
        self, kind: str, tokens: int | None, usd: float | None, miss_reason: str | None, n: int = 1
    ) -> None:
        self.requests += n
        self.missed_tokens += tokens or 0
        if usd is not None:
            self.missed_usd += usd
            self.priced += n
        self.agrees += n * agrees(kind, miss_reason)
        code = code_of(miss_reason)
        self.diagnosed += n * (code is not None)
        key = code or NONE
        self.prefixgate[key] = self.prefixgate.get(key, 0) + n

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "missed_tokens": self.missed_tokens,
            "missed_usd": round(self.missed_usd, 9) + 0.0 if self.priced else None,
            "agrees": self.agrees,
            "diagnosed": self.diagnosed,
            "prefixgate": dict(sorted(self.prefixgate.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


class ProviderMisses:
    """Counts per provider miss type: the totals, and each provider's."""

    __slots__ = ("total", "providers", "_type")

    def __init__(self, limit: int = MAX_REASONS) -> None:
        self.total: dict[str, _Entry] = {}
        self.providers: dict[str, dict[str, _Entry]] = {}
        self._type = Cap(limit)

    def seen(self, kind: str) -> str:
        """``kind``, or ``other`` once :data:`MAX_REASONS` others were seen first."""
        return self._type(kind)

    def add(
        self,
        provider: str,
        kind: str,
        tokens: int | None,
        usd: float | None,
        miss_reason: str | None,
        n: int = 1,
    ) -> None:
        kind = self._type(kind)
        for table in (self.total, self.providers.setdefault(provider, {})):
            entry = table.get(kind)
            if entry is None:
                entry = table[kind] = _Entry()
            entry.add(kind, tokens, usd, miss_reason, n)

    def handle(self, record: RequestRecord) -> None:
        if record.provider_miss_reason:
            self.add(
                record.provider,
                record.provider_miss_reason,
                record.provider_missed_tokens,
                record.provider_missed_usd,
                record.miss_reason,
            )

    @staticmethod
    def shown(table: dict[str, _Entry]) -> dict[str, dict[str, Any]]:
        """Most requests first, then by type."""
        return {k: e.to_dict() for k, e in sorted(table.items(), key=lambda kv: (-kv[1].requests, kv[0]))}

    def totals(self) -> dict[str, dict[str, Any]]:
        return self.shown(self.total)

    def of(self, provider: str) -> dict[str, dict[str, Any]]:
        return self.shown(self.providers.get(provider, {}))


def from_ledger(conn: sqlite3.Connection, where: str, args: list) -> ProviderMisses:
    """The same counts over the ledger's rows in a range (``where``/``args`` as :mod:`proxy.reporting.summary`
    builds them). The most frequent types are kept first, the rest fold into ``other``."""
    cond = (where + " AND" if where else " WHERE") + " provider_miss_reason IS NOT NULL"
    sql = (
        f"SELECT provider, provider_miss_reason, miss_reason, COUNT(*), SUM(provider_missed_tokens), "
        f"SUM(provider_missed_usd) FROM requests{cond} GROUP BY provider, provider_miss_reason, miss_reason"
    )
    rows = conn.execute(sql, args).fetchall()
    by_type: dict[str, int] = {}
    for _, kind, _, n, _, _ in rows:
        by_type[kind] = by_type.get(kind, 0) + n
    out = ProviderMisses()
    for kind in sorted(by_type, key=lambda k: (-by_type[k], k)):
        out.seen(kind)
    for provider, kind, miss_reason, n, tokens, usd in rows:
        out.add(provider or "", kind, tokens, usd, miss_reason, n)
    return out
