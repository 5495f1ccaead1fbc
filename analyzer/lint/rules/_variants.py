"""Shared bookkeeping of the cross-request rules (PG301, PG302): baseline and variants.

Per group (say, one tool set on one model) the first value seen is the baseline; every
other value is a variant, reported once with the number of requests that sent it. The
rules decide what a group and a value are and word the finding; this module only counts.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any

from analyzer.lint.documents import Request
from analyzer.lint.model import Finding, Rule


class Variants:
    def __init__(self) -> None:
        self._first: dict[Hashable, tuple[Any, Request]] = {}
        self._found: dict[tuple[Hashable, Hashable], tuple[Finding, dict[str, Any]]] = {}
        self._count: dict[tuple[Hashable, Hashable], int] = {}

    def new_variant(self, group: Hashable, value: Hashable, req: Request) -> tuple[Any, Request] | None:
        """(baseline value, baseline request) when ``value`` is a variant not seen before; else None.

        A first sight becomes the baseline; a repeat of a known variant is counted here.
        """
        if group not in self._first:
            self._first[group] = (value, req)
            return None
        base = self._first[group]
        if value == base[0]:
            return None
        key = (group, value)
        if key in self._found:
            self._count[key] += 1
            return None
        return base

    def report(self, group: Hashable, value: Hashable, finding: Finding, **fmt: Any) -> None:
        """Record the finding for a new variant; ``fmt`` fills the rule's message (with ``count``)."""
        self._found[(group, value)] = (finding, fmt)
        self._count[(group, value)] = 1

    def findings(self, rule: Rule) -> Iterator[Finding]:
        for key, (finding, fmt) in self._found.items():
            finding.message = rule.message.format(count=self._count[key], **fmt)
            yield finding
