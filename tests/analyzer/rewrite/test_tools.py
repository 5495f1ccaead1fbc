"""analyzer.rewrite.tools: tools by name, keys sorted; left alone around a client's marker."""

from __future__ import annotations

from analyzer.rewrite.tools import SORT_TOOL_KEYS, SORT_TOOLS, sort_tools, sorted_keys, tool_name


def anthropic_tool(name, **schema):
    return {"name": name, "description": f"{name} tool", "input_schema": {"type": "object", **schema}}


def test_tools_sorted_by_name_in_every_shape():
    chat = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("b", "a", "c")]
    responses = [{"type": "function", "name": n, "parameters": {}} for n in ("b", "a", "c")]
    for tools in (chat, responses, [anthropic_tool(n) for n in ("b", "a", "c")]):
        out, applied = sort_tools(tools)
        assert [tool_name(t) for t in out] == ["a", "b", "c"] and SORT_TOOLS in applied
        assert [tool_name(t) for t in tools] == ["b", "a", "c"]  # the input is not mutated


def test_keys_sorted_recursively_lists_keep_their_order():
    tool = {
        "name": "a",
        "input_schema": {
            "type": "object",
            "required": ["z", "a"],
            "properties": {"z": {"type": "string"}, "a": {"enum": ["y", "x"], "type": "string"}},
        },
    }
    out, applied = sort_tools([tool])
    assert applied == [SORT_TOOL_KEYS]
    schema = out[0]["input_schema"]
    assert list(out[0]) == ["input_schema", "name"] and list(schema) == ["properties", "required", "type"]
    assert (
        list(schema["properties"]) == ["a", "z"]
        and schema["required"] == ["z", "a"]
        and schema["properties"]["a"]["enum"] == ["y", "x"]
    )
    assert sorted_keys(out) == out


def test_sorted_tools_are_left_as_they_are():
    tools = [sorted_keys(anthropic_tool(n)) for n in ("a", "b")]
    assert sort_tools(tools) == (None, [])


def test_a_client_marker_inside_the_tools_means_hands_off():
    tools = [anthropic_tool("b"), {**anthropic_tool("a"), "cache_control": {"type": "ephemeral"}}]
    assert sort_tools(tools) == (None, [])


def test_nameless_or_duplicate_tools_keep_their_order():
    tools = [anthropic_tool("b"), {"type": "web_search_20250305"}, anthropic_tool("a")]
    out, applied = sort_tools(tools)
    assert SORT_TOOLS not in applied and [tool_name(t) for t in (out or tools)] == ["b", None, "a"]
    twice = [anthropic_tool("b"), anthropic_tool("a"), anthropic_tool("b")]
    out, applied = sort_tools(twice)
    assert SORT_TOOLS not in applied
