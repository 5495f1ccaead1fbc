"""analyzer.lint.rules.volatile_values: PG001–PG009, one class with nine entries."""

from __future__ import annotations

import pytest

from analyzer.lint.model import Rule
from analyzer.lint.rules import BY_CODE
from analyzer.lint.rules._volatile import LABELS
from analyzer.lint.rules.volatile_values import VOLATILE_VALUE_RULES, VolatileValueRule


def test_nine_entries_report_every_detector_kind_once():
    assert [e.RULE.code for e in VOLATILE_VALUE_RULES] == [f"PG00{i}" for i in range(1, 10)]
    kinds = [k for e in VOLATILE_VALUE_RULES for k in e.kinds]
    assert sorted(kinds) == sorted(LABELS)
    assert all(BY_CODE[e.RULE.code] is e for e in VOLATILE_VALUE_RULES)


def test_an_unknown_detector_kind_is_refused():
    rule = Rule(code="PG099", name="clock-in-prefix", summary="s", message="m", why="w", example="e", fix="f")
    with pytest.raises(ValueError, match="PG099"):
        VolatileValueRule(rule, kinds=("clock",))
