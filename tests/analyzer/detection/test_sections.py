"""analyzer.detection.sections: a value written out under a heading that names examples is fixed
text down to the next heading of its level; a slot there, and values after the section, are read
as anywhere else."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.sections import in_example_section

PROMPT = """# Agent
Today's date is {{TODAY}}.

## Example Conversations

### Weather
USER: Will it rain?
ASSISTANT: {"tool": "weather", "args": {"date": "2026-01-27", "time": "14:05"}}

### Greeting
ASSISTANT: Hello {{FirstName}}, it is 2026-01-27.

## Session
Current date: 2025-04-24
"""


def test_written_values_in_an_example_section_are_fixed_text():
    found = [v.value for v in find_volatile(PROMPT)]
    assert "2026-01-27" not in found and "14:05" not in found
    assert "2025-04-24" in found  # the next level-2 heading ends the section
    assert "{{TODAY}}" in found


def test_a_slot_in_an_example_section_is_not_dropped_for_it():
    memo: dict = {}
    at = PROMPT.index("{{FirstName}}")
    assert in_example_section(PROMPT, at, memo)
    assert not in_example_section(PROMPT, PROMPT.index("Current date"), memo)
    assert not in_example_section(PROMPT, PROMPT.index("{{TODAY}}"), memo)


def test_headings_in_other_languages_and_levels():
    text = "你是助手。\n## 示例\n用户：现在几点？\n助手：现在是 2026-01-27 14:05。\n# 当前\n当前时间：2025-04-24 09:30\n"
    found = [v.value for v in find_volatile(text)]
    assert found == ["2025-04-24 09:30"]


def test_no_heading_no_section():
    assert not in_example_section("Examples are below.\nDate: 2026-01-27\n", 20, {})
    assert not in_example_section("#Examples\nDate: 2026-01-27\n", 12, {})  # no space: not a heading


def test_a_title_or_a_heading_naming_a_prompt_heads_the_prompt_itself():
    for title in ("# Example Prompt\n\n", "# Examples\n\n", "Intro.\n## Sample system prompt\n"):
        text = title + "- Current date: {{today}}\n- Current time: 2025-04-24 13:52:03\n"
        assert "2025-04-24 13:52:03" in [v.value for v in find_volatile(text)], title


def test_a_heading_naming_a_sample_context_heads_the_prompt_itself():
    text = "Notes.\n## Sample Letta Context\n- The current time is: 2025-07-06 07:36:20 PM UTC+0000\n"
    assert "2025-07-06 07:36:20" in [v.value for v in find_volatile(text)]
