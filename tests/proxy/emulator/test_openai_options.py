"""The GPT-5.6+ caching parameters as OpenAI checks them: what passes, what is a 400 and which param it names."""

from __future__ import annotations

import pytest

from proxy.emulator.openai_options import CacheOptions, ParamError, check, markers

NEW, OLD = "gpt-5.6-terra", "gpt-4o"


def text(t: str, mark: object = None) -> dict:
    part = {"type": "text", "text": t}
    if mark is not None:
        part["prompt_cache_breakpoint"] = mark
    return part


def chat(*parts: dict, **extra) -> dict:
    return {
        "model": NEW,
        "messages": [{"role": "developer", "content": "rules"}, {"role": "user", "content": list(parts)}],
        **extra,
    }


def error(body: dict, api: str = "chat", model: str = NEW) -> ParamError:
    with pytest.raises(ParamError) as err:
        check(body, api, model)
    return err.value


def test_defaults_and_accepted_values():
    assert check(chat(text("a")), "chat", NEW) == CacheOptions("implicit", "30m")
    assert check(chat(text("a"), prompt_cache_options={"mode": "explicit"}), "chat", NEW) == CacheOptions(
        "explicit", "30m"
    )
    assert check(
        {"model": NEW, "input": "x", "prompt_cache_options": {"ttl": "12h"}}, "responses", NEW
    ) == CacheOptions("implicit", "12h")
    assert (
        check(chat(text("a", {"mode": "explicit", "ttl": "12h"})), "chat", NEW) == CacheOptions()
    )  # a marker may say 12h on Chat
    assert check(chat(text("a"), prompt_cache_options=None), "chat", NEW) == CacheOptions()


@pytest.mark.parametrize(
    "api, ttl", [("chat", "12h"), ("compact", "12h"), ("responses", "1h"), ("chat", "24h")]
)
def test_a_ttl_the_api_does_not_take_is_invalid_value(api, ttl):
    body = {"model": NEW, "messages": [], "input": "x", "prompt_cache_options": {"ttl": ttl}}
    e = error(body, api)
    assert (e.param, e.code) == ("prompt_cache_options.ttl", "invalid_value") and repr(ttl) in e.message


def test_mode_and_options_shape():
    e = error(chat(text("a"), prompt_cache_options={"mode": "manual"}))
    assert (e.param, e.code) == ("prompt_cache_options.mode", "invalid_value")
    e = error(chat(text("a"), prompt_cache_options="explicit"))
    assert (e.param, e.code) == ("prompt_cache_options", "invalid_type")


def test_bad_breakpoints_name_their_field():
    e = error(chat(text("a"), text("b", {"mode": "implicit"})))
    assert (e.param, e.code) == ("messages[1].content[1].prompt_cache_breakpoint.mode", "invalid_value")
    e = error(chat(text("a", {"mode": "explicit", "ttl": "1h"})))
    assert (e.param, e.code) == ("messages[1].content[0].prompt_cache_breakpoint.ttl", "invalid_value")
    e = error(chat(text("a", {"ttl": "30m"})))
    assert (e.param, e.code) == (
        "messages[1].content[0].prompt_cache_breakpoint.mode",
        "missing_required_parameter",
    )
    e = error(chat(text("a", True)))
    assert (e.param, e.code) == ("messages[1].content[0].prompt_cache_breakpoint", "invalid_type")


def test_older_models_refuse_both_parameters():
    e = error(chat(text("a"), prompt_cache_options={"mode": "implicit"}), model=OLD)
    assert (e.param, e.code) == ("prompt_cache_options", "unsupported_parameter")
    e = error(
        {
            "model": OLD,
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "a", "prompt_cache_breakpoint": {"mode": "explicit"}}
                    ],
                }
            ],
        },
        "responses",
        OLD,
    )
    assert (e.param, e.code) == ("input[0].content[0].prompt_cache_breakpoint", "unsupported_parameter")
    assert check(chat(text("a")), "chat", OLD) is None  # nothing new in the body: the old rules, no error
    assert check({"model": "gpt-5.5", "input": "x"}, "responses", "gpt-5.5") is None


def test_markers_are_found_at_any_depth_under_messages_and_input_only():
    body = {
        "messages": [{"content": [{"type": "tool_result", "content": [text("x", {"mode": "explicit"})]}]}],
        "metadata": {"prompt_cache_breakpoint": {"mode": "explicit"}},
    }
    assert [p for p, _ in markers(body)] == ["messages[0].content[0].content[0].prompt_cache_breakpoint"]


MARK = {"mode": "explicit"}


def test_markers_on_every_part_type_the_sdk_marks_are_accepted():
    image = {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AAAA"},
        "prompt_cache_breakpoint": MARK,
    }
    audio = {
        "type": "input_audio",
        "input_audio": {"data": "AAAA", "format": "wav"},
        "prompt_cache_breakpoint": MARK,
    }
    file = {"type": "file", "file": {"file_id": "file-1"}, "prompt_cache_breakpoint": MARK}
    assistant = {"role": "assistant", "content": [text("done", MARK)]}
    tool = {"role": "tool", "tool_call_id": "c1", "content": [text("42", MARK)]}
    body = {"model": NEW, "messages": [{"role": "user", "content": [image, audio, file]}, assistant, tool]}
    assert check(body, "chat", NEW) == CacheOptions()
    parts = [
        {"type": "input_text", "text": "a", "prompt_cache_breakpoint": MARK},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "prompt_cache_breakpoint": MARK},
        {"type": "input_file", "file_id": "file-1", "prompt_cache_breakpoint": MARK},
    ]
    body = {
        "model": NEW,
        "input": [
            {"role": "user", "content": parts},
            {"type": "message", "role": "developer", "content": parts[:1]},
            {"role": "assistant", "content": parts[:1]},  # EasyInputMessageParam takes input parts
            {"type": "function_call_output", "call_id": "c1", "output": parts},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": parts[:1]},
        ],
    }
    for api in ("responses", "compact"):
        assert check(body, api, NEW) == CacheOptions()


@pytest.mark.parametrize(
    "api, body, param",
    [
        # on the message itself, not on a content part
        (
            "chat",
            {"messages": [{"role": "user", "content": "x", "prompt_cache_breakpoint": MARK}]},
            "messages[0].prompt_cache_breakpoint",
        ),
        # a refusal part takes none (ChatCompletionContentPartRefusalParam)
        (
            "chat",
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "refusal", "refusal": "no", "prompt_cache_breakpoint": MARK}],
                    }
                ]
            },
            "messages[0].content[0].prompt_cache_breakpoint",
        ),
        # a Responses part type on Chat
        (
            "chat",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "input_text", "text": "x", "prompt_cache_breakpoint": MARK}],
                    }
                ]
            },
            "messages[0].content[0].prompt_cache_breakpoint",
        ),
        # deeper than a content part
        (
            "chat",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "u", "prompt_cache_breakpoint": MARK}}
                        ],
                    }
                ]
            },
            "messages[0].content[0].image_url.prompt_cache_breakpoint",
        ),
        # a Responses assistant message's output_text takes none (ResponseOutputTextParam)
        (
            "responses",
            {
                "input": [
                    {
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "x", "prompt_cache_breakpoint": MARK}],
                    }
                ]
            },
            "input[0].content[0].prompt_cache_breakpoint",
        ),
        (
            "responses",
            {
                "input": [
                    {
                        "type": "function_call",
                        "call_id": "c",
                        "name": "f",
                        "arguments": "{}",
                        "prompt_cache_breakpoint": MARK,
                    }
                ]
            },
            "input[0].prompt_cache_breakpoint",
        ),
        (
            "compact",
            {
                "input": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "text", "text": "x", "prompt_cache_breakpoint": MARK}],
                    }
                ]
            },
            "input[0].content[0].prompt_cache_breakpoint",
        ),
    ],
)
def test_a_marker_where_the_sdk_types_take_none_is_an_unknown_parameter(api, body, param):
    e = error({"model": NEW, **body}, api)
    assert (e.param, e.code) == (param, "unknown_parameter") and param in e.message


@pytest.mark.parametrize(
    "api, options, param",
    [
        ("chat", {"mode": "implicit", "retention": "24h"}, "prompt_cache_options.retention"),
        ("chat", {"prewarm": True}, "prompt_cache_options.prewarm"),  # Responses only
        ("compact", {"comparison_response_id": "resp_1"}, "prompt_cache_options.comparison_response_id"),
    ],
)
def test_an_options_field_the_api_does_not_take_is_an_unknown_parameter(api, options, param):
    e = error({"model": NEW, "messages": [], "input": "x", "prompt_cache_options": options}, api)
    assert (e.param, e.code) == (param, "unknown_parameter")


def test_responses_takes_prewarm_and_comparison_response_id_and_a_marker_takes_only_mode_and_ttl():
    body = {
        "model": NEW,
        "input": "x",
        "prompt_cache_options": {"prewarm": False, "comparison_response_id": "resp_1"},
    }
    assert check(body, "responses", NEW) == CacheOptions()
    e = error(chat(text("a", {"mode": "explicit", "scope": "org"})))
    assert (e.param, e.code) == ("messages[1].content[0].prompt_cache_breakpoint.scope", "unknown_parameter")
