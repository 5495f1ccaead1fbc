from analyzer.segments import (
    anthropic_segments,
    guess_shape,
    openai_chat_segments,
    openai_responses_segments,
    segments_for,
)


def test_anthropic_cache_order_is_tools_system_messages():
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "r"}]}
        ],
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "tools": [{"name": "a", "input_schema": {"type": "object"}}, {"name": "b", "input_schema": {}}],
    }
    segs = anthropic_segments(body)
    assert [s.path for s in segs] == [
        "tools[0]",
        "tools[1]",
        "system[0]",
        "messages[0].content[0]",
        "messages[0].content[1]",
    ]
    assert segs[2].cache_control == "1h"
    assert segs[0].cache_control is None


def test_cache_control_marker_does_not_change_bytes():
    plain = {"system": [{"type": "text", "text": "sys"}], "messages": []}
    marked = {
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "messages": [],
    }
    assert anthropic_segments(plain)[0].data == anthropic_segments(marked)[0].data
    assert anthropic_segments(marked)[0].cache_control == "5m"


def test_string_content_equals_single_text_block():
    a = anthropic_segments({"system": "be brief", "messages": [{"role": "user", "content": "hi"}]})
    b = anthropic_segments(
        {
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        }
    )
    assert [s.data for s in a] == [s.data for s in b]


def test_same_text_in_different_roles_differs():
    a = openai_chat_segments({"messages": [{"role": "system", "content": "x"}]})
    b = openai_chat_segments({"messages": [{"role": "user", "content": "x"}]})
    assert a[0].data != b[0].data


def test_openai_message_key_order_does_not_matter_but_tool_key_order_does():
    a = openai_chat_segments({"messages": [{"role": "user", "content": "x", "name": "n"}]})
    b = openai_chat_segments({"messages": [{"name": "n", "content": "x", "role": "user"}]})
    assert a[0].data == b[0].data
    t1 = openai_chat_segments({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})
    t2 = openai_chat_segments({"tools": [{"function": {"parameters": {}, "name": "f"}, "type": "function"}]})
    assert t1[0].data != t2[0].data


def test_openai_chat_order_tools_schema_messages():
    body = {
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
        "tools": [{"type": "function", "function": {"name": "f"}}],
    }
    assert [s.kind for s in openai_chat_segments(body)] == ["tool", "schema", "message", "message"]


def test_responses_segments():
    body = {
        "instructions": "be kind",
        "input": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "web_search"}],
    }
    assert [s.path for s in openai_responses_segments(body)] == ["tools[0]", "instructions", "input[0]"]
    assert [s.path for s in openai_responses_segments({"input": "hi"})] == ["input"]


def test_segments_for_routes_and_odd_bodies():
    assert segments_for("openai", "/v1/embeddings", {"input": "x"}) == []
    assert segments_for("openai", "/v1/chat/completions", ["not", "a", "dict"]) == []
    assert segments_for("openai", "/v1/completions", {"prompt": "abc"})[0].kind == "prompt"
    # wrong types are skipped, never raised on
    assert segments_for("anthropic", "/v1/messages", {"messages": "oops", "tools": 3, "system": 5}) != None  # noqa: E711
    odd = segments_for("openai", "/v1/chat/completions", {"messages": [1, None, {"role": 3}]})
    assert len(odd) == 3


def test_guess_shape():
    assert guess_shape({"messages": [], "system": "x"}) == ("anthropic", "/v1/messages")
    assert guess_shape({"messages": [{"role": "user", "content": "x"}]}) == ("openai", "/v1/chat/completions")
    assert guess_shape({"input": "x"}) == ("openai", "/v1/responses")
    assert guess_shape({"prompt": "x"}) == ("openai", "/v1/completions")
    assert guess_shape({"model": "claude-sonnet-4", "system": "x"}) == ("anthropic", "/v1/messages")
    assert guess_shape({"system": "linux"}) is None
    assert guess_shape({"foo": 1}) is None
    assert guess_shape([1]) is None


def test_guess_shape_never_raises_on_fields_of_the_wrong_type():
    """A log line's ``messages`` or ``tools`` that is no list (a number, ``null``) is no Anthropic
    block: the body reads as Chat Completions (whose segmenter then skips the field)."""
    for odd in (5, 2.5, None, True):
        assert guess_shape({"messages": odd, "tools": odd}) == ("openai", "/v1/chat/completions")
    marked = {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "tools": 7}
    assert guess_shape(marked) == ("openai", "/v1/chat/completions")
    assert guess_shape({"messages": 5, "tools": [{"input_schema": {}}]}) == ("anthropic", "/v1/messages")


def test_nested_tool_result_markers_do_not_change_bytes_but_mark_the_segment():
    inner = [{"type": "text", "text": "result"}]
    marked = [{"type": "text", "text": "result", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]

    def body(content):
        return {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}],
                }
            ]
        }

    plain_seg, marked_seg = anthropic_segments(body(inner))[0], anthropic_segments(body(marked))[0]
    assert plain_seg.data == marked_seg.data
    assert (plain_seg.cache_control, marked_seg.cache_control) == (None, "1h")


def test_gemini_cache_order_is_cached_content_system_instruction_tools_contents():
    from analyzer.segments import gemini_segments

    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}, {"text": "there"}]},
            {"role": "model", "parts": [{"text": "yo"}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "lookup"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
        "cachedContent": "cachedContents/abc123",
        "generationConfig": {"maxOutputTokens": 5},
    }
    segs = segments_for("gemini", "/v1beta/models/gemini-2.5-flash:generateContent", body)
    assert [(s.kind, s.path, s.role) for s in segs] == [
        ("cached", "cachedContent", None),
        ("system", "systemInstruction.parts[0]", "system"),
        ("tool", "tools[0]", None),
        ("message", "contents[0].parts[0]", "user"),
        ("message", "contents[0].parts[1]", "user"),
        ("message", "contents[1].parts[0]", "model"),
    ]
    assert [s.in_head for s in segs] == [True, True, True, False, False, False]
    assert segs == gemini_segments(body)
    assert segs == segments_for("gemini", "/gem/v1/models/gemini-2.5-flash:streamGenerateContent", body)
    assert segments_for("gemini", "/v1beta/models/gemini-2.5-flash:embedContent", body) == []
    assert segments_for("gemini", "/v1beta/models", body) == []


def test_gemini_spellings_that_render_alike_hash_alike():
    camel = {
        "systemInstruction": {"parts": [{"text": "Sys."}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    }
    snake = {"system_instruction": "Sys.", "contents": [{"parts": [{"text": "hi"}]}]}  # role defaults to user
    route = "/v1beta/models/m:generateContent"
    assert [s.data for s in segments_for("gemini", route, camel)] == [
        s.data for s in segments_for("gemini", route, snake)
    ]
    assert [s.path for s in segments_for("gemini", route, snake)] == [
        "system_instruction",
        "contents[0].parts[0]",
    ]
    # the same text as system instruction and as a user turn never hashes alike
    assert (
        segments_for("gemini", route, {"systemInstruction": "x"})[0].data
        != segments_for("gemini", route, {"contents": [{"parts": [{"text": "x"}]}]})[0].data
    )


def test_gemini_odd_bodies_never_raise():
    route = "/v1beta/models/m:generateContent"
    for body in (
        {"contents": None},
        {"contents": [None, 3, "x", {"parts": None}]},
        {"systemInstruction": 5},
        {"tools": "x"},
        {"cachedContent": 3},
    ):
        segments_for("gemini", route, body)
    assert guess_shape({"contents": [], "model": "models/gemini-2.5-flash"}) == (
        "gemini",
        "/v1beta/models/gemini-2.5-flash:generateContent",
    )


# -- OpenAI GPT-5.6 prompt_cache_breakpoint markers ---------------------------------------

MARK = {"mode": "explicit"}


def _part(text, mark=None, kind="text"):
    return {"type": kind, "text": text, **({"prompt_cache_breakpoint": mark} if mark is not None else {})}


def test_several_marked_parts_of_one_message_keep_the_longest_ttl():
    # a 12h marker before a 30m one in the same message is a 12h breakpoint (Chat reports one
    # write count for both TTLs, so losing the 12h one would price its writes at the 30m rate)
    body = {
        "messages": [
            {"role": "user", "content": [_part("a", {"mode": "explicit", "ttl": "12h"}), _part("b", MARK)]}
        ]
    }
    assert openai_chat_segments(body)[0].cache_control == "12h"
    body = {
        "messages": [
            {"role": "user", "content": [_part("a", MARK), _part("b", {"mode": "explicit", "ttl": "12h"})]}
        ]
    }
    assert openai_chat_segments(body)[0].cache_control == "12h"
    # a marker naming no ttl takes the request's (Responses may ask 12h), then the longest wins
    resp = {
        "prompt_cache_options": {"ttl": "12h"},
        "input": [
            {
                "role": "user",
                "content": [
                    _part("a", MARK, "input_text"),
                    _part("b", {"mode": "explicit", "ttl": "30m"}, "input_text"),
                ],
            }
        ],
    }
    assert openai_responses_segments(resp)[0].cache_control == "12h"
    both = {"messages": [{"role": "user", "content": [_part("a", MARK), _part("b", MARK)]}]}
    assert openai_chat_segments(both)[0].cache_control == "30m"


def test_function_call_output_parts_carry_markers_and_markers_do_not_change_bytes():
    def item(mark):
        return {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [_part("result", mark, "input_text")],
        }

    plain, marked = (
        openai_responses_segments({"input": [item(None)]})[0],
        openai_responses_segments({"input": [item(MARK)]})[0],
    )
    assert plain.data == marked.data
    assert (plain.cache_control, marked.cache_control) == (None, "30m")


def test_markers_in_unexpected_places_never_raise():
    odd_marks = [None, True, "explicit", 3, [], {"mode": "explicit", "ttl": ["12h"]}, {"ttl": {"x": 1}}]
    for mark in odd_marks:
        for body in (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "x", "prompt_cache_breakpoint": mark}],
                    }
                ]
            },
            {"messages": [{"role": "user", "content": "x", "prompt_cache_breakpoint": mark}]},
            {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "x", "prompt_cache_breakpoint": mark},
                    }
                ]
            },
            {
                "input": [
                    {"type": "function_call_output", "output": [{"prompt_cache_breakpoint": mark}, 5, None]}
                ]
            },
            {"input": [{"type": "function_call_output", "output": {"prompt_cache_breakpoint": mark}}]},
            {
                "input": [{"role": "user", "content": [[{"prompt_cache_breakpoint": mark}]]}],
                "prompt_cache_options": mark,
            },
            {
                "tools": [{"type": "function", "prompt_cache_breakpoint": mark}],
                "prompt_cache_options": {"ttl": mark},
            },
        ):
            for route in ("/v1/chat/completions", "/v1/responses", "/v1/responses/compact"):
                for seg in segments_for("openai", route, body):
                    assert seg.cache_control in (None, "30m", "12h")
