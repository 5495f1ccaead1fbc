"""analyzer.detection.elided: a slot whose name says nothing is judged by its label read as a name."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.elided import by_label, opaque


def test_an_elided_expression_under_a_telling_label():
    assert opaque("EXPR_1") and opaque("value") and opaque("0")
    assert by_label("EXPR_1", "Current branch: ")
    assert by_label("0", "Current time (local): ")
    text = "Current branch: ${EXPR_1}\n\nMain branch (you will usually use this for PRs): ${EXPR_2}\n"
    assert [v.value for v in find_volatile(text)] == ["${EXPR_1}"]


def test_a_named_slot_or_a_label_that_tells_nothing_is_not_read_so():
    assert not opaque("branch_name") and by_label("branch_name", "Current branch: ") is None
    assert by_label("EXPR_2", "Main branch: ") is None
    assert by_label("EXPR_4", "Summary of the plan: ") is None
    assert by_label("EXPR_5", "") is None
