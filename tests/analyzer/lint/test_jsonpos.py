"""The JSON position mapper: field paths → spans, decoded index → raw offset."""

from __future__ import annotations

import json

from analyzer.lint.jsonpos import line_col, locate, string_offset


def test_spans_cover_every_value_with_paths():
    raw = '{\n  "a": [1, {"b-c": "x"}],\n  "d": {"e": null, "f": true}, "g": -1.5e3\n}'
    spans = locate(raw)
    for path, expected in {"a[0]": 1, "a[1].b-c": "x", "d.e": None, "d.f": True, "g": -1500.0}.items():
        start, end = spans[path]
        assert json.loads(raw[start:end]) == expected
    assert spans[""] == (0, len(raw))


def test_string_offset_steps_over_escapes_and_surrogate_pairs():
    raw = '{"s": "a\\n\\u00e9\\ud83d\\ude00 12:30"}'
    start, _ = locate(raw)["s"]
    decoded = json.loads(raw)["s"]
    i = decoded.index("12:30")
    assert raw[string_offset(raw, start, i) : string_offset(raw, start, i) + 5] == "12:30"


def test_line_col_is_one_based_and_handles_crlf():
    text = "ab\r\ncd\nef"
    assert line_col(text, 0) == (1, 1)
    assert line_col(text, 5) == (2, 2)
    assert line_col(text, 8) == (3, 2)


def _slow_offset(raw: str, start: int, index: int) -> int:
    """The definition: walk the token one decoded character at a time."""
    i, n = start + 1, 0
    while n < index and raw[i] != '"':
        if raw[i] == "\\":
            i += (
                12
                if raw[i + 1] == "u" and 0xD800 <= int(raw[i + 2 : i + 6], 16) < 0xDC00
                else 6
                if raw[i + 1] == "u"
                else 2
            )
        else:
            i += 1
        n += 1
    return i


def test_string_offset_matches_a_character_walk_on_mixed_strings():
    import random

    rng = random.Random(7)
    alphabet = ["a", "é", "😀", "\n", '"', "\\", "\t", "\u2028", " ", "Z"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        raw = json.dumps({"k": text}, ensure_ascii=rng.random() < 0.5)
        start, _ = locate(raw)["k"]
        for index in range(len(text) + 2):  # past the end: stops at the closing quote
            assert string_offset(raw, start, index) == _slow_offset(raw, start, index), (raw, index)


def test_line_starts_are_the_same_with_or_without_carriage_returns():
    from analyzer.lint.jsonpos import line_starts_of

    assert line_starts_of("a\nbc\n\nd") == [0, 2, 5, 6]
    assert line_starts_of("a\r\nbc\rd\n") == [0, 3, 6, 8]
    assert line_starts_of("") == [0] and line_starts_of("\n") == [0, 1]
