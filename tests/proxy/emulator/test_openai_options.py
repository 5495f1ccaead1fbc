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
    return {"model": NEW, "messages": [{"role": "developer", "content": "rules"}, {"role": "user", "content": list(parts)}], **extra}


def error(body: dict, api: str = "chat", model: str = NEW) -> ParamError:
    with pytest.raises(ParamError) as err:
        check(body, api, model)
    return err.value


def test_defaults_and_accepted_values():
    assert check(chat(text("a")), "chat", NEW) == CacheOptions("implicit", "30m")
    assert check(chat(text("a"), prompt_cache_options={"mode": "explicit"}), "chat", NEW) == CacheOptions("explicit", "30m")
    assert check({"model": NEW, "input": "x", "prompt_cache_options": {"ttl": "12h"}}, "responses", NEW) == CacheOptions("implicit", "12h")
    assert check(chat(text("a", {"mode": "explicit", "ttl": "12h"})), "chat", NEW) == CacheOptions()  # a marker may say 12h on Chat
    assert check(chat(text("a"), prompt_cache_options=None), "chat", NEW) == CacheOptions()


@pytest.mark.parametrize("api, ttl", [("chat", "12h"), ("compact", "12h"), ("responses", "1h"), ("chat", "24h")])
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
    assert (e.param, e.code) == ("messages[1].content[0].prompt_cache_breakpoint.mode", "missing_required_parameter")
    e = error(chat(text("a", True)))
    assert (e.param, e.code) == ("messages[1].content[0].prompt_cache_breakpoint", "invalid_type")


def test_older_models_refuse_both_parameters():
    e = error(chat(text("a"), prompt_cache_options={"mode": "implicit"}), model=OLD)
    assert (e.param, e.code) == ("prompt_cache_options", "unsupported_parameter")
    e = error({"model": OLD, "input": [{"role": "user", "content": [{"type": "input_text", "text": "a",
                                                                      "prompt_cache_breakpoint": {"mode": "explicit"}}]}]},
              "responses", OLD)
    assert (e.param, e.code) == ("input[0].content[0].prompt_cache_breakpoint", "unsupported_parameter")
    assert check(chat(text("a")), "chat", OLD) is None  # nothing new in the body: the old rules, no error
    assert check({"model": "gpt-5.5", "input": "x"}, "responses", "gpt-5.5") is None


def test_markers_are_found_at_any_depth_under_messages_and_input_only():
    body = {"messages": [{"content": [{"type": "tool_result", "content": [text("x", {"mode": "explicit"})]}]}],
            "metadata": {"prompt_cache_breakpoint": {"mode": "explicit"}}}
    assert [p for p, _ in markers(body)] == ["messages[0].content[0].content[0].prompt_cache_breakpoint"]
