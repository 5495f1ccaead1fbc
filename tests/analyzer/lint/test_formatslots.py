"""analyzer.lint.sources.formatslots: each slot of a printf, braces or Rust format string takes its argument."""

from __future__ import annotations

from analyzer.detection.names import HIGH, Verdict
from analyzer.lint.sources.formatslots import fill
from analyzer.lint.sources.pieces import Piece


def slots(text: str, style: str) -> list[tuple[str, int | None, str | None]]:
    asked = []

    def resolve(index, name):
        asked.append((index, name))
        return Verdict("volatile", HIGH) if index == 1 or name == "now" else None

    pieces = fill([Piece(text, list(range(len(text) + 1)))], style, resolve)
    out = [(p.text, p.start, p.verdict is not None) for p in pieces if not p.literal]
    literal = "".join(p.text for p in pieces if p.literal)
    return out, asked, literal


def test_printf_slots_in_turn_and_by_index():
    out, asked, literal = slots("a %s b %5.2f c %[1]v d %% e %2$s", "printf")
    assert [o[0] for o in out] == ["%s", "%5.2f", "%[1]v", "%2$s"]
    assert asked == [(0, None), (1, None), (0, None), (1, None)]
    assert out[1] == ("%5.2f", 7, True) and "%" in literal and "%%" not in literal


def test_braces_and_rust_slots():
    out, asked, literal = slots("Now {0:yyyy} then {1} {{literal}}", "braces")
    assert [o[0] for o in out] == ["{0:yyyy}", "{1}"] and literal.endswith("{literal}")
    out, asked, _ = slots("a {} b {now} c {0:?} d {}", "rust")
    assert asked == [(0, None), (None, "now"), (0, None), (1, None)]
    assert [o[2] for o in out] == [False, True, False, True]


def test_text_without_slots_stays_one_literal():
    out, asked, literal = slots("You are a helpful assistant.", "printf")
    assert out == [] and asked == [] and literal == "You are a helpful assistant."
