"""analyzer.detection.given: place and weather slots handed over as the material, and memory found for
this request, are content."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.given import introduced


def test_a_weather_slot_under_here_is_and_a_place_in_a_sentence_about_the_text():
    text = (
        "In dem folgenden Text wird das Wetter in {location} angegeben.\n\nHier ist das Wetter:\n\n{weather}\n\n"
        "Gib an, dass dies derzeit das Wetter in {location} ist.\n"
    )
    assert introduced(text) == {"location", "weather"}
    assert find_volatile(text) == []
    english = "Here is the forecast:\n{forecast}\n\nDescribe it.\n"
    assert introduced(english) == {"forecast"}


def test_the_users_place_or_other_slots_stay_judged():
    own = "Here is the user's location:\n{location}\n"
    assert introduced(own) == frozenset()
    assert [v.value for v in find_volatile(own)] == ["{location}"]
    dates = "The following text was written on {current_date}.\n"
    assert introduced(dates) == frozenset()
    bare = "The weather in {location} now: {weather}\n"
    assert introduced(bare) == frozenset()
    assert [v.value for v in find_volatile(bare)] == ["{location}", "{weather}"]


def test_here_is_found_at_the_lines_before_a_brace_line_as_one_pass_finds_it():
    from analyzer.detection.given import _HERE, _here

    for text in (
        "Here is the weather:\n{weather}\n",
        "Intro.\nHere is the weather:\n\n{{ weather }}\n",
        "Hier ist das Wetter:\n  {weather}\nVoici la météo :\n{location}",
        "{weather}\nhere are: \n\n\n{x}",
        "Here is the weather:\n{\n weather }\n",
        "no slot here:\n text {weather}\n",
    ):
        assert [m.span() for m in _here(text)] == [m.span() for m in _HERE.finditer(text)], text


@pytest.mark.parametrize(
    "text",
    [
        "Here are some things you pulled from long-term memory related to the current conversation:\n{memories}\n",
        "# Memories on the topic\n- following are memories about current topic\n\n{{memories}}",
        "根据用户当前的相关记忆memories, 回答问题。\n\n<memories>\n{memories}\n</memories>",
        "Here is the current conversation history:\n```\n{chat_memory}\n```",
        "Update the chat memory with the new messages.\n\nExisting chat memory:\n{chat_memory}\n",
        "请根据新的对话更新记忆。\n已有记忆：{memory}\n",
    ],
)
def test_a_memory_block_found_for_this_request_is_content(text):
    assert find_volatile(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "# Long-term memory about this user\n{long_term_memory}\n",
        "Core memory:\n{core_memory}\n\nRelated tools are listed below.",
        "Do not call it 'previous conversation history'.\n{long_term_memory}",
        "Current memory:\n{memory}\n\nAnswer the user.",  # carried into each request, not rewritten
    ],
)
def test_a_memory_block_kept_for_the_user_or_session_is_not(text):
    assert [v.value for v in find_volatile(text) if v.kind == "placeholder"] != []


@pytest.mark.parametrize(
    "text, slot",
    [
        ("Here are your memories related to this user:\n{memories}", "{memories}"),
        (
            "# Long-term memory about this user\nUse it only when relevant.\n{long_term_memory}",
            "{long_term_memory}",
        ),
        ("Use the retrieved documents below.\n\nYour memory of this user:\n{memory}", "{memory}"),
        ("Relevant system stats:\n- {free_memory}", "{free_memory}"),  # a reading, not a memory block
    ],
)
def test_relevance_words_about_something_else_leave_a_memory_slot_judged(text, slot):
    assert slot in [v.value for v in find_volatile(text)]
