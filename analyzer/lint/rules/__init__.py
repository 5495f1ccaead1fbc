"""The rule registry: one module per rule, each with ``RULE`` and ``check``.

``check`` takes a :class:`~analyzer.lint.doc.Doc` for scopes ``text`` and ``request``, a
:class:`~analyzer.lint.documents.SourceFile` for ``file``, and the list of a file's
requests for ``log``. Codes: PG0xx volatile values, PG1xx cache structure, PG2xx bytes and
ordering inside one file, PG3xx differences across the requests of a log.
"""

from __future__ import annotations

from types import ModuleType

from analyzer.lint.model import Rule
from analyzer.lint.rules import (
    pg001_time_in_prefix,
    pg002_date_in_prefix,
    pg003_today_phrase,
    pg004_volatile_placeholder,
    pg005_uuid_in_prefix,
    pg006_request_id_in_prefix,
    pg007_jwt_in_prefix,
    pg008_random_id_in_prefix,
    pg101_volatile_before_static_block,
    pg102_too_many_breakpoints,
    pg103_breakpoint_after_volatile,
    pg104_prefix_below_minimum,
    pg201_byte_order_mark,
    pg202_mixed_line_endings,
    pg203_unsorted_json_keys,
    pg204_unsorted_tools,
    pg301_tool_order_differs,
    pg302_json_key_order_differs,
    pg303_prefix_diverges_early,
)

MODULES: list[ModuleType] = [
    pg001_time_in_prefix, pg002_date_in_prefix, pg003_today_phrase, pg004_volatile_placeholder, pg005_uuid_in_prefix,
    pg006_request_id_in_prefix, pg007_jwt_in_prefix, pg008_random_id_in_prefix, pg101_volatile_before_static_block,
    pg102_too_many_breakpoints, pg103_breakpoint_after_volatile, pg104_prefix_below_minimum, pg201_byte_order_mark,
    pg202_mixed_line_endings, pg203_unsorted_json_keys, pg204_unsorted_tools, pg301_tool_order_differs,
    pg302_json_key_order_differs, pg303_prefix_diverges_early,
]
BY_CODE: dict[str, ModuleType] = {m.RULE.code: m for m in MODULES}
RULES: list[Rule] = [m.RULE for m in MODULES]
BY_NAME: dict[str, str] = {m.RULE.name: m.RULE.code for m in MODULES}
