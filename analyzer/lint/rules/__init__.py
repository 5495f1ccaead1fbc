"""The rule registry: every rule's entry, each with ``RULE`` and ``check``.

An entry is a one-rule module (``pg101_volatile_before_static_block`` …) or one entry of a
parametrised rule family (PG001–PG009: :mod:`.volatile_values`, one class, nine entries).
``check`` takes a :class:`~analyzer.lint.doc.Doc` for scopes ``text`` and ``request``, a
:class:`~analyzer.lint.documents.SourceFile` for ``file``, and the list of a file's
requests for ``log``. Codes: PG0xx volatile values, PG1xx cache structure, PG2xx bytes and
ordering inside one file, PG3xx differences across the requests of a log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules import (
    pg101_volatile_before_static_block,
    pg102_too_many_breakpoints,
    pg103_breakpoint_after_volatile,
    pg104_prefix_below_minimum,
    pg105_no_breakpoint_at_stable_head,
    pg201_byte_order_mark,
    pg202_mixed_line_endings,
    pg203_unsorted_json_keys,
    pg204_unsorted_tools,
    pg301_tool_order_differs,
    pg302_json_key_order_differs,
    pg303_prefix_diverges_early,
)
from analyzer.lint.rules.volatile_values import VOLATILE_VALUE_RULES


class RuleEntry(Protocol):
    RULE: Rule

    def check(self, arg: Any) -> Iterable[Finding]: ...


MODULES: list[RuleEntry] = [
    *VOLATILE_VALUE_RULES,
    pg101_volatile_before_static_block,
    pg102_too_many_breakpoints,
    pg103_breakpoint_after_volatile,
    pg104_prefix_below_minimum,
    pg105_no_breakpoint_at_stable_head,
    pg201_byte_order_mark,
    pg202_mixed_line_endings,
    pg203_unsorted_json_keys,
    pg204_unsorted_tools,
    pg301_tool_order_differs,
    pg302_json_key_order_differs,
    pg303_prefix_diverges_early,
]
BY_CODE: dict[str, RuleEntry] = {m.RULE.code: m for m in MODULES}
RULES: list[Rule] = [m.RULE for m in MODULES]
BY_NAME: dict[str, str] = {m.RULE.name: m.RULE.code for m in MODULES}
