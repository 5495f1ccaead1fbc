"""analyzer.detection.inlinecode: a slot a label shows in inline code is judged; one in prose stays code."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.inlinecode import JudgedCode, label_value


def _slots(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind == "placeholder"]


def test_a_slot_in_backticks_as_a_labels_value_is_rendered():
    text = "**Context for this request:**\n\n- Session ID: `{{ session_id }}`\n- Global State: `{{ global_state }}`\n"
    assert _slots(text) == ["{{ session_id }}", "{{ global_state }}"]
    assert label_value(text, text.index("{{ session_id"))
    assert text.index("{{ session_id") not in JudgedCode(text)
    with_code_in_label = "- Example `Date` header: `{{ dynamic_date_example }}`\n"
    assert _slots(with_code_in_label) == ["{{ dynamic_date_example }}"]


def test_a_slot_in_backticks_in_prose_or_documentation_stays_code():
    prose = "Write `{{ date }}` anywhere to insert the date.\n"
    assert _slots(prose) == [] and prose.index("{{") in JudgedCode(prose)
    syntax = "- Placeholder syntax: `{{ session_id }}`\n"
    assert _slots(syntax) == []
    headed = "## Template variables\n\n- Session: `{{ session_id }}`\n- Date: `{{ date }}`\n"
    assert _slots(headed) == []
    more_after = "- Session ID: `{{ session_id }}` is what you write to show it\n"
    assert _slots(more_after) == []
    fenced = "```md\n- Session ID: `{{ session_id }}`\n```\n"
    assert fenced.index("{{") in JudgedCode(fenced)


def test_a_slot_in_backticks_that_a_sentence_uses_is_rendered():
    spanish = "Calcula la hora usando el valor de `{{hora_actual}}` si el usuario dice 'mañana'.\n"
    assert _slots(spanish) == ["{{hora_actual}}"]
    chinese = "摘要必须以 `{{request_time}}` 提供的完整日期和星期开头。\n"
    assert _slots(chinese) == ["{{request_time}}"]
    # shown, not used: an example, a variable list's entry, a line about the template syntax
    assert _slots("Inline code such as `{{now}}` is documentation.\n") == []
    assert _slots("- `{{ time }}` - the current timestamp\n") == []
    assert _slots("The template tag `{{ time }}` renders the hour.\n") == []


def test_front_matter_values_are_metadata_but_its_slots_are_rendered():
    post = "---\ntitle: How to\ndate: 2024-7-8 01:00:20\n---\n\nBody text.\n"
    assert post.index("01:00:20") in JudgedCode(post)
    assert find_volatile(post) == []
    template = "---\nCURRENT_TIME: {{ CURRENT_TIME }}\n---\n\nYou are a helper.\n"
    assert _slots(template) == ["{{ CURRENT_TIME }}"]
    not_front = "Intro.\n---\ndate: 2024-7-8 01:00:20\n---\n"
    assert not_front.index("01:00:20") not in JudgedCode(not_front)


def test_a_rendered_value_under_a_now_key_in_front_matter_is_live():
    rendered = "---\nCURRENT_TIME: 2025-04-24 13:52:03\n---\n\nYou are a helper.\n"
    assert rendered.index("2025-04-24") not in JudgedCode(rendered)
    assert [v.value for v in find_volatile(rendered)] == ["2025-04-24 13:52:03"]
    published = "---\npublished: 2025-04-24 13:52:03\nupdated_now: false\n---\n\nBody.\n"
    assert find_volatile(published) == []


def _line_reads(text: str, monkeypatch) -> tuple[int, int]:
    """(times a line's slots were read, characters they covered) while ``text`` is detected."""
    from analyzer.detection import inlinecode

    reads = [0, 0]
    inner = inlinecode._line_slots

    def counted(text, ls, le):
        reads[0] += 1
        reads[1] += le - ls
        return inner(text, ls, le)

    monkeypatch.setattr(inlinecode, "_line_slots", counted)
    find_volatile(text)
    monkeypatch.setattr(inlinecode, "_line_slots", inner)
    return reads[0], reads[1]


def test_a_line_of_many_inline_slots_is_read_once_not_per_slot(monkeypatch):
    # each slot used to re-read its whole line (its slots, the label before it): work grew with the
    # square of the line; now each line is read once, however many slots it holds (counted, not timed)
    for piece, head in (("`{a}` `{b}` ", "Slots: "), ("Label: `{x}` ", ""), ("`{a}` ", "`{b}`: `{c}` ")):
        small, large = head + piece * 400, head + piece * 1600
        small_reads, large_reads = _line_reads(small, monkeypatch), _line_reads(large, monkeypatch)
        assert 1 <= large_reads[0] == small_reads[0] <= 2, (piece, small_reads, large_reads)
        assert large_reads[1] <= 2 * len(large)
    text = "`{a}` " * 50 + ": `{x}` " * 50 + "\n- Session: `{s}`\n"
    memo: dict = {}
    for at in [i for i, ch in enumerate(text) if ch == "`"]:
        assert label_value(text, at, memo) == label_value(text, at)


def test_a_fence_holding_one_slot_and_nothing_else_is_rendered():
    text = "Current datetime, ISO format:\n```\n{{ local_datetime }}\n```\nAnswer in JSON."
    assert _slots(text) == ["{{ local_datetime }}"]
    docs = "Write the template like this:\n```\nToday is {{ local_datetime }}\n```\n"
    assert _slots(docs) == []  # a syntax example shows more than a bare slot
    assert _slots("```\n{{ local_datetime }} and {{ user_name }}\n```\n") == []


def test_a_fence_holding_one_short_line_under_a_label_is_the_rendered_value():
    text = "Current datetime, ISO format:\n```\n2025-04-24 13:52:03\n```\nAnswer in JSON."
    assert [v.value for v in find_volatile(text)] == ["2025-04-24 13:52:03"]
    assert find_volatile("Example output:\n```\n2025-04-24 13:52:03\n```\n") == []
    assert find_volatile("Run it:\n```\nsleep 10:30\necho 2025-04-24 13:52:03\n```\n") == []
    assert find_volatile("```\n2025-04-24 13:52:03\n```\n") == []  # no label above: a sample
    assert find_volatile("Log line format:\n```\nat 2025-04-24 13:52:03\n```\n") == []  # not the whole line


def test_a_fence_holding_one_n8n_expression_over_lines_is_rendered():
    text = "Data atual:\n```javascript\n{{ (() => {\n  const now = $now.setZone('UTC')\n  return now.toISO()\n})() }}\n```\n"
    assert [v.value[:11] for v in find_volatile(text)] == ["{{ (() => {"]
    shown = "Write it so:\n```javascript\nconst x = {{ (() => { return $now })() }}\n```\n"
    assert find_volatile(shown) == []  # more than the expression in the fence: code shown


def test_a_bare_fence_of_key_value_lines_naming_now_is_a_rendered_block():
    env = (
        "Here is useful information about the environment you are running in:\n\n```\n"
        "Working directory: /Users/ana\nIs directory a git repo: No\nToday's date: 2025-11-01\n```\n"
    )
    assert "2025-11-01" in [v.value for v in find_volatile(env)]


@pytest.mark.parametrize(
    "fence",
    [
        "```\nmodel: gpt-4\ncreated: 2025-11-01T10:00:00Z\n```\n",  # a record, no key naming now
        "```yaml\nversion: 2\ndate: 2025-11-01\n```\n",  # an info string: code
        '```\nnow = "2025-11-01 10:00"\nprint(now)\n```\n',  # code lines
    ],
)
def test_other_fences_stay_code(fence):
    assert find_volatile(fence) == []


def test_a_slot_opening_a_numbered_entry_or_a_table_row_is_documentation():
    assert _slots("1. `{{ current_time }}` - the timestamp\n") == []
    assert _slots("| `{{ current_time }}` | the timestamp |\n") == []
