"""analyzer.lint.sources.scriptstrings: PHP and Ruby literals' delimiters, escapes, interpolations
and heredocs, with offsets; single-quoted literals and nowdocs interpolate nothing."""

from __future__ import annotations

import pytest

from analyzer.lint.sources.scriptexpr import ScriptFile
from analyzer.lint.sources.scriptstrings import literal_pieces


def decoded(src: str, grammar: str) -> list[tuple[str, bool]]:
    f = ScriptFile(src, grammar)
    node = next(n for n in f.walk(f.tree.root_node) if n.type in f.g.strings)
    pieces = literal_pieces(f, node, lambda expr: None)
    for p in pieces:  # every literal character points back at itself (escapes at their backslash)
        if p.literal:
            for i, ch in enumerate(p.text):
                assert src[p.offset(i)] == ch or src[p.offset(i)] == "\\"
        else:
            assert src[p.start : p.start + len(p.text)] == p.text
    return [(p.text, p.literal) for p in pieces]


@pytest.mark.parametrize(
    "src, grammar, want",
    [
        (
            '<?php $s = "Hi $name, now {$a->b()}!\\n";',
            "php",
            [("Hi ", True), ("$name", False), (", now ", True), ("{$a->b()}", False), ("!\n", True)],
        ),
        (
            '<?php $s = "${x} and $u->name \\$y";',
            "php",
            [("${x}", False), (" and ", True), ("$u->name", False), (" $y", True)],
        ),
        ("<?php $s = 'no $x here \\' \\n';", "php", [("no $x here ' \\n", True)]),
        ("<?php $s = <<<EOT\nHello $who\nEOT;\n", "php", [("Hello ", True), ("$who", False)]),
        ("<?php $s = <<<'EOT'\nHello $who\nEOT;\n", "php", [("Hello $who", True)]),
        (
            's = "Now #{Time.now}\\t\\#{x}"',
            "ruby",
            [("Now ", True), ("#{Time.now}", False), ("\t#{x}", True)],
        ),
        ("s = 'keep #{x} \\' \\n'", "ruby", [("keep #{x} ' \\n", True)]),
        ("s = %Q(Hi #{name}) + 'x'", "ruby", [("Hi ", True), ("#{name}", False)]),
        (
            "s = <<~EOS\n  Hi #{name}\n  Bye\nEOS\n",
            "ruby",
            [("  Hi ", True), ("#{name}", False), ("\n  Bye\n", True)],
        ),
        ("f(<<-EOS, 1)\n  x #{y}\n  EOS\n", "ruby", [("  x ", True), ("#{y}", False), ("\n  ", True)]),
        ("s = <<~'EOS'\n  raw #{y}\nEOS\n", "ruby", [("  raw #{y}\n", True)]),
        ('s = "a" "b #{c}"', "ruby", [("a", True), ("b ", True), ("#{c}", False)]),
    ],
)
def test_literals_decode(src, grammar, want):
    assert decoded(src, grammar) == want
