"""analyzer.detection.slotcontext: what the lines around a slot of no telling name say, found and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.slotcontext import content, in_period, now_words, range_bound, under_user_heading


def slots(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind == "placeholder"]


def test_a_block_headed_as_the_users_facts_is_per_user():
    text = "Known facts about the user:\n- Likes: {likes}\n- Job: {job}\n- Asked: {question}\n"
    assert under_user_heading(text, text.index("{likes}"))
    assert slots(text) == ["{likes}", "{job}"]  # the request's content stays content
    de = "🧠 Bekannte Infos über den User:\n- Likes: {likes}\n"
    assert slots(de) == ["{likes}"]


@pytest.mark.parametrize(
    "text",
    [
        "Rules of user interaction:\n- Tone: {tone}\n",
        "Instructions about the user's request:\n- Style: {style}\n",
        "Known facts about the user:\n\n- Likes: {likes}\n",  # a blank line ends the block
        "User profile: see below.\nLikes: {likes}\n",  # no list under the heading
    ],
)
def test_other_headings_and_lines_are_not(text):
    assert slots(text) == []


def test_the_bounds_of_a_period_counted_back_from_today():
    assert range_bound("start_date") and range_bound("date_to") and not range_bound("start_time")
    ko = "수집 기간: {{ start_date }} - {{ end_date }} (지난 주)\n아래는 {{ start_date }} 기간의 기사입니다"
    assert in_period(ko, ko.index("{{ start_date }}"), ko.index(" -"))
    assert slots(ko) == [
        "{{ start_date }}",
        "{{ end_date }}",
        "{{ start_date }}",
    ]  # a repeat is the same value
    en = "Summarise the news of last week ({start_date} to {end_date})."
    assert slots(en) == ["{start_date}", "{end_date}"]
    assert slots("The booking runs from {start_date} to {end_date}.") == []
    assert slots("Find flights between {start_date} and {end_date}. Today: {today}") == ["{today}"]


def test_an_event_word_that_modifies_a_noun_labels_no_moment():
    assert now_words(["Generated", "answer:"]) == ["answer:"]
    assert now_words(["Generated", "at:"]) == ["Generated", "at:"]
    assert slots("Question: {q}\nGenerated answer: {a}\n") == []
    assert slots("Report generated: {x}\n") == ["{x}"]


def test_a_content_slot_is_never_volatile_by_its_label():
    assert content("chat_history") and content("user_question") and not content("stamp")
    assert slots("Today's question: {question}") == []
    assert slots("Today's date: {stamp}") == ["{stamp}"]


def test_where_this_conversation_is_and_the_place_of_todays_date():
    assert [v.value for v in find_volatile("The server you are in is called: [Server Name]\n")] == [
        "[Server Name]"
    ]
    assert find_volatile("You are in charge of [Team Name].\n") == []
    text = "Today is Thursday, 24 April 2025 in _______. Be brief."
    assert "_______" in [v.value for v in find_volatile(text)]
    assert find_volatile("Fill in _______ with the city.") == []


def test_preferences_under_a_user_heading_and_a_mode_you_are_in_are_settings():
    assert slots("User profile:\n- Language: {language}\n- Units: {units}\n- Name: {n}\n") == ["{n}"]
    assert slots("You are in {mode} mode.") == []


def test_a_customer_context_block_but_not_the_topic_under_it():
    text = "# Customer Context\nFirst Name: {{customer.firstName}}\nAge: {{customer.age}}\n"
    assert slots(text) == ["{{customer.firstName}}", "{{customer.age}}"]
    assert slots("User Context:\n- {research_topic}\n") == []


def test_a_section_about_this_conversations_surroundings_is_per_session():
    text = "Information about your environment:\n\n- The server is owned by: [Server Owner]\n- Topic: {x}\n"
    assert slots(text) == ["[Server Owner]", "{x}"]
    assert slots("About this chat:\n- Host: {host}\n") == ["{host}"]


@pytest.mark.parametrize(
    "text",
    [
        "Information about your task:\n\n- Owner: [Team Owner]\n",  # a task, not the surroundings
        "Information about your environment:\n\nFollow the rules.\n- Owner: [Server Owner]\n",  # not right under it
    ],
)
def test_other_sections_are_not_about_the_surroundings(text):
    assert slots(text) == []


def test_a_working_copy_slot_after_a_git_label():
    assert slots("## Git\nThe current branch is {branch}.\nGit status: {status}\n") == [
        "{branch}",
        "{status}",
    ]
    assert (
        slots("Order status: {status}\nThe default branch is {defaultBranch}.\nBranch office: {office}\n")
        == []
    )
    # a slot alone on its line under a header that names git
    assert slots("Recent commits:\n{log}\n\nGit status:\n{status}\n") == ["{log}", "{status}"]
    assert slots("Status:\n{status}\n\nNotes:\n{log}\n\nRecent commits:\nSee {log}.\n") == []


def test_the_state_of_an_owner_whose_clock_is_rendered():
    text = (
        'Use the start_date "{itinerary_start_date}" and end_date "{itinerary_end_date}".\n'
        'If "{itinerary_datetime}" is before the start date, plan.\n<itinerary>\n{itinerary}\n</itinerary>\n'
    )
    assert slots(text) == [
        "{itinerary_start_date}",
        "{itinerary_end_date}",
        "{itinerary_datetime}",
        "{itinerary}",
    ]


def test_an_owner_with_no_rendered_clock_or_a_field_that_is_no_bound_is_not():
    assert slots('Trip from "{trip_start_date}" to "{trip_end_date}".\n') == []
    assert slots("Now: {report_datetime}\nTitle: {report_title}\n") == ["{report_datetime}"]
    assert slots("Now: {current_time}\nStart: {current_start_date}\n{current}\n") == ["{current_time}"]


def test_a_count_slot_in_a_sentence_about_today_is_how_many_not_when():
    assert slots("오늘의 날짜는 {today} 입니다. 오늘이 생일인 유명인 {n}명을 나열해 주세요.") == ["{today}"]
    assert slots("Tokens used today: {n}") == ["{n}"]  # a key line: read as the reading it labels
    assert slots("Messages left today: **{count}**") == ["{count}"]
    assert slots("Users online right now {count}.") == ["{count}"]  # no counted noun after it


def test_the_lines_under_a_markdown_heading_about_the_user_after_a_blank_line():
    text = "## Current User\n\n- **Name**: {fullname_str}\n- **Language**: {lang}\n"
    assert slots(text) == ["{fullname_str}"]
    assert slots("## Current task\n\n- **Name**: {task_title}\n") == []


def test_a_slot_in_parentheses_after_the_users_value_is_per_user():
    assert slots("Use the offset matching the user's timezone ({x}).") == ["{x}"]
    assert slots("Use the offset of the server's timezone ({x}).") == []
