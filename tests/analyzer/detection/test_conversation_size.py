"""analyzer.detection.conversation_size: the conversation's size so far is a counter; the size of fixed lists
or of one message is not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.names import judge_expression


@pytest.mark.parametrize(
    "expr",
    ["threadInfo.messages.length", "len(messages)", "history.length", "len(chat_history)", "num_messages"],
)
def test_the_conversations_size_is_a_counter(expr):
    assert "counts the conversation's" in judge_expression(expr).reason


@pytest.mark.parametrize(
    "expr", ["tools.length", "len(examples)", "message.length", "len(message)", "len(tools)"]
)
def test_the_size_of_fixed_lists_or_one_message_is_not(expr):
    assert judge_expression(expr) is None


@pytest.mark.parametrize("slot", ["{num_messages}", "{{ messages.length }}"])
def test_a_template_slot_counting_messages_is_found(slot):
    text = f"You are a helpful bot.\nThis conversation has {slot} messages so far.\n"
    assert [v.value for v in find_volatile(text)] == [slot]


@pytest.mark.parametrize(
    "expr",
    [
        "history_size",
        "max_history_size",
        "MAX_HISTORY_SIZE",
        "config.max_history.size",
        "few_shot_messages.length",
        "example_messages.length",
        "len(system_messages)",
        "len(SYSTEM_MESSAGES)",
        "len(error_messages)",
        "quickReplies.length",
        "templates.messages.length",
        "num_turns",
    ],
)
def test_settings_constants_and_fixed_message_lists_are_not_the_conversation(expr):
    assert judge_expression(expr) is None


def test_a_dotted_name_of_letters_no_word_reads_is_judged_without_error():
    from analyzer.detection.conversation_size import conversation_size
    from analyzer.detection.names import words

    # the Python and JS readers pass such names as they are: its words are none, no size, no crash
    assert conversation_size(["日付.値", "."], [], words) is None
