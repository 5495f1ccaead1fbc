"""analyzer.lint.sources.pieces: a template's characters map back to the file, empty pieces skipped."""

from __future__ import annotations

from analyzer.lint.sources.pieces import Piece, Template


def test_file_offsets_of_a_templates_characters_and_its_end():
    t = Template(
        [Piece("ab", [10, 11, 12]), Piece("", start=20), Piece("{x}", start=30), Piece("cd", [40, 41, 42])]
    )
    assert [t.file_offset(i) for i in range(7)] == [10, 11, 30, 31, 32, 40, 41]
    assert t.file_offset(7) == 42  # the end: past the last literal piece
    t.pieces.append(Piece("{y}", start=50))  # a piece added later is seen
    assert t.file_offset(7) == 50 and t.file_offset(10) == 53
