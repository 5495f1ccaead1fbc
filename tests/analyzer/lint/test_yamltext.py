"""analyzer.lint.yamltext: a YAML prompt file's whole-line comments, which its parser drops, and
the block scalars whose ``#`` lines are prompt text."""

from __future__ import annotations

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from analyzer.lint.yamltext import comment_lines, in_spans

CODES = {f"PG00{i}" for i in range(1, 10)}

PROMPTS = """daily:
  # Variables: {{date}}, {{#articles}}, {{title}}
  template: |
    ### You are a news analyst; the date is {{date}}.

    # Today: {{today}}
  # Variables again: {{now}}
weekly:
  template: >-
    # Week of {{week}}
  note: fixed  # {{user_name}} after a value stays text
"""


def test_comment_lines_are_the_whole_line_comments_outside_block_scalars():
    spans = comment_lines(PROMPTS)
    assert [PROMPTS[a:b] for a, b in spans] == [
        "  # Variables: {{date}}, {{#articles}}, {{title}}",
        "  # Variables again: {{now}}",
    ]
    assert in_spans(spans, PROMPTS.index("{{title}}"))
    assert not in_spans(spans, PROMPTS.index("### You"))
    assert not in_spans(spans, PROMPTS.index("# Today"))
    assert not in_spans(spans, PROMPTS.index("# Week"))
    assert comment_lines("a: 1\nb: [x]\n") == []


def _slots(tmp_path, name: str, text: str) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    return [
        lines[f.line - 1][f.col - 1 : f.end_col - 1]
        for f in run(load([str(path)]), CODES)
        if f.code == "PG004"
    ]


def test_lint_drops_what_a_yaml_comment_holds_and_keeps_the_templates(tmp_path):
    got = _slots(tmp_path, "prompts.yaml", PROMPTS)
    assert got == ["{{date}}", "{{today}}", "{{week}}", "{{user_name}}"]
    # the same text as Markdown is all prompt text: the comments' slots are found too
    assert len(_slots(tmp_path, "prompts.md", PROMPTS)) == 6


def test_a_quoted_scalar_over_lines_is_text_to_its_closing_quote():
    text = "prompt: \"You are helpful.\n  # Today is {{date}}\n  Be nice.\"\n# a comment\nb: 'it''s\n  # inside'\n"
    assert [text[a:b] for a, b in comment_lines(text)] == ["# a comment"]


def test_toml_whole_line_comments_but_not_the_lines_of_a_multi_line_string(tmp_path):
    text = (
        "# generated: 2025-11-25\n"
        "[prompt]\n"
        "#   - {{ current_datetime }} : the current time\n"
        'team = """\n'
        "# Current time\n"
        "{{ current_datetime }}\n"
        '"""\n'
    )
    path = tmp_path / "prompts.toml"
    path.write_text(text, encoding="utf-8")
    found = [(f.line, f.code) for f in run(load([str(path)]), CODES)]
    assert found == [(5, "PG003"), (6, "PG004")]  # the heading and slot in the string, not the comments


def test_toml_quotes_inside_a_one_line_string_open_nothing_and_lines_end_at_newlines_only():
    from analyzer.lint.yamltext import toml_comment_lines

    text = 'note = "see \'\'\' here"\n# Current time: {{ now }}\nsystem = "You are a bot.\u2028# not a comment"\n'
    comments = toml_comment_lines(text)
    assert [text[a:b] for a, b in comments] == ["# Current time: {{ now }}"]
