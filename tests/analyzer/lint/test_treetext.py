"""analyzer.lint.sources.treetext: a parse tree-sitter takes too long on is given up, and the file read as text."""

from __future__ import annotations

from analyzer.lint.sources import compiled, treetext

KOTLIN = (
    'fun p(): String {\n    val d = LocalDate.now()\n    return "You are a helpful bot. Today is $d."\n}\n'
    * 400
)


def test_a_parse_past_its_deadline_is_given_up_and_the_file_is_read_as_text(monkeypatch):
    assert compiled.templates(KOTLIN, ".kt")  # parsed in time: templates found
    monkeypatch.setattr(treetext, "PARSE_SECONDS", -1.0)  # every deadline already past
    assert compiled.templates(KOTLIN, ".kt") is None  # None: the caller reads it as prompt text
