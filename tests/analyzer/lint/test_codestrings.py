"""analyzer.lint.sources.codestrings: a literal's delimiters, escapes and interpolations, with offsets."""

from __future__ import annotations

import pytest

from analyzer.lint.sources.codeexpr import CodeFile
from analyzer.lint.sources.codestrings import literal_pieces


def decoded(src: str, grammar: str) -> list[tuple[str, bool]]:
    f = CodeFile(src, grammar)
    node = next(n for n in f.walk(f.tree.root_node) if n.type in f.g.strings)
    pieces = literal_pieces(f, node, grammar, lambda expr: None)
    for p in pieces:  # every literal character points back at itself (escapes at their backslash)
        if p.literal:
            for i, ch in enumerate(p.text):
                assert src[p.offset(i)] == ch or src[p.offset(i)] in '\\"{}'
    return [(p.text, p.literal) for p in pieces]


@pytest.mark.parametrize(
    "src, grammar, want",
    [
        ('var s = "a\\tb\\u00e9"', "go", [("a\tbé", True)]),
        ("var s = `raw \\n {{x}}`", "go", [("raw \\n {{x}}", True)]),
        ('const S: &str = r#"say "hi""#;', "rust", [('say "hi"', True)]),
        ('class A { String s = """\n  one \\\n  two\\n"""; }', "java", [("\n  one   two\n", True)]),
        ('class A { string s = @"say ""hi"" \\n"; }', "csharp", [('say "hi" \\n', True)]),
        (
            'class A { string s = $"a {{b}} {x}!"; }',
            "csharp",
            [("a {b} ", True), ("{x}", False), ("!", True)],
        ),
        ('val s = "hi ${x.y} \\$z"', "kotlin", [("hi ", True), ("${x.y}", False), (" $z", True)]),
        # Kotlin's short form: the grammar leaves "$name" as text; "$" before no name stays a "$"
        (
            'val s = "Today: $todayDate, $5 off"',
            "kotlin",
            [("Today: ", True), ("$todayDate", False), (", $5 off", True)],
        ),
        ('class A { string s = ""; }', "csharp", []),
    ],
)
def test_literals_decode(src, grammar, want):
    assert decoded(src, grammar) == want
