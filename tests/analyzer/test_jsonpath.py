"""One JSON-path syntax: text ↔ parsed round trip, reads, copy-on-write updates, and the
paths segments, jsonpos and rewrite write are all readable by it."""

from __future__ import annotations

import json
import random

import pytest

from analyzer.jsonpath import JsonPath, get_path, index_path, join_path, key_path
from analyzer.lint.jsonpos import locate
from analyzer.segments import anthropic_segments, openai_chat_segments, openai_responses_segments


def test_quoted_keys_round_trip_and_read():
    body = {"x": {"$defs": {"item": 1}, "a.b": 2, "": 3, 'say "hi"': 4, "back\\slash": 5}}
    for name, want in [("$defs", {"item": 1}), ("a.b", 2), ("", 3), ('say "hi"', 4), ("back\\slash", 5)]:
        text = key_path("x", name)
        assert text.startswith('x."')
        assert JsonPath.parse(text) == ("x", name)
        assert str(JsonPath.parse(text)) == text
        assert get_path(body, text) == want
    assert key_path("x", "$defs") == 'x."$defs"'
    assert get_path(body, 'x."$defs".item') == 1  # the old reader returned None here


def test_plain_keys_and_indexes_keep_their_text_form():
    assert key_path("", "messages") == "messages"
    assert index_path("messages", 2) == "messages[2]"
    assert key_path(index_path("messages", 2), "content") == "messages[2].content"
    assert key_path("a", "b-c_d") == "a.b-c_d" and key_path("a", "é1") == "a.é1"
    assert JsonPath.parse("messages[2].content[0]") == ("messages", 2, "content", 0)
    assert JsonPath.parse("[3].request") == (3, "request")
    assert JsonPath.parse("") == () and str(JsonPath()) == ""
    assert (
        join_path("", "a") == "a"
        and join_path("a", "") == "a"
        and join_path("[3]", "request") == "[3].request"
        and join_path("a", "[1]") == "a[1]"
    )


def test_every_key_round_trips():
    rng = random.Random(11)
    alphabet = ["a", "Z", "_", "-", "1", ".", '"', "\\", "$", " ", "[", "]", "é", "²", "😀", "\n"]
    for _ in range(500):
        parts = tuple(
            rng.choice([rng.randrange(20), "".join(rng.choice(alphabet) for _ in range(rng.randrange(4)))])
            for _ in range(rng.randrange(1, 5))
        )
        path = JsonPath(parts)
        assert JsonPath.parse(str(path)) == path, parts


@pytest.mark.parametrize("text", [".a", "a..b", "a[", "a[x]", '"x""y"', "a.[1]", "a[-1]"])
def test_malformed_paths_raise(text):
    with pytest.raises(ValueError):
        JsonPath.parse(text)


def test_get_never_raises_on_a_missing_place():
    body = {"a": [{"b": "x"}], "s": "text"}
    assert get_path(body, "a[0].b") == "x"
    assert (
        get_path(body, "a[1].b") is None and get_path(body, "a.b") is None and get_path(body, "s[0]") is None
    )
    assert get_path(body, "missing") is None and get_path(body, "") is body


def test_updated_copies_only_along_the_path():
    body = {"a": [{"b": 1}, {"c": 2}], "d": {"e": 3}}
    new = JsonPath.parse("a[0].b").updated(body, lambda v: v + 1)
    assert new == {"a": [{"b": 2}, {"c": 2}], "d": {"e": 3}}
    assert body["a"][0]["b"] == 1  # the input is untouched
    assert new["d"] is body["d"] and new["a"][1] is body["a"][1] and new["a"] is not body["a"]
    with pytest.raises(KeyError):
        JsonPath.parse("a[0].zz.y").updated(body, lambda v: v)


def test_jsonpos_paths_are_readable():
    value = {"a": [1, {"$ref": "x", "k-1": None}], "odd key": {'q"': [True]}, "": 0}
    raw = json.dumps(value, indent=1)
    for path, (start, end) in locate(raw).items():
        assert get_path(value, path) == json.loads(raw[start:end]), path


BODIES = [
    (
        anthropic_segments,
        {
            "tools": [{"name": "t", "input_schema": {}}],
            "system": "s",
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            ],
        },
    ),
    (
        openai_chat_segments,
        {
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        },
    ),
    (
        openai_responses_segments,
        {
            "text": {"format": {"type": "json_schema", "name": "x", "schema": {}}},
            "instructions": "i",
            "input": "hi",
        },
    ),
]


@pytest.mark.parametrize(("cut", "body"), BODIES)
def test_segment_paths_parse_and_point_at_their_value(cut, body):
    for seg in cut(body):
        path = JsonPath.parse(seg.path)
        assert str(path) == seg.path
        assert path.get(body) is not None


def test_rewrite_blocks_sit_at_their_segments_paths():
    from analyzer.rewrite.breakpoints import _blocks

    body = {
        "tools": [{"name": "t", "input_schema": {}}],
        "system": [{"type": "text", "text": "s"}],
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
        ],
    }
    assert [str(b.path) for b in _blocks(body)] == [s.path for s in anthropic_segments(body)]
