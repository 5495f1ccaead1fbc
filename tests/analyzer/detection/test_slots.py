"""analyzer.detection.slots: the current user's values under a label that says so, and blanks, found and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def state(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind == "state"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The user's name is Maria.", "Maria"),
        ("The user is based in country US.", "US"),
        ("The user is located in Lisbon, Portugal.", "Lisbon, Portugal"),
        (
            "User has shared their location with the app and they are located in Farnborough, England, "
            "United Kingdom where it's currently 12:28.",
            "Farnborough, England, United Kingdom",
        ),
        ("Current location: Lisbon, Portugal", "Lisbon, Portugal"),
        ("Remember the current location is Osaka City, Osaka, Japan.", "Osaka City, Osaka, Japan"),
        ("- Current city: Porto", "Porto"),
    ],
)
def test_a_value_the_label_says_is_the_users(text, value):
    assert value in state(text)


@pytest.mark.parametrize(
    "text",
    [
        "Our office is located in Lisbon, Portugal.",
        "The user's data is located in Frankfurt, Germany.",  # where the service keeps it
        "The user is located in the EU or in the US; ask which.",
        "Users are located in Lisbon and Porto.",
        "If the user asks about a restaurant that is located in Paris, recommend one.",
        "The user wants hotels that are located in Lisbon, Portugal.",
        "Use the current location tool when the user asks for directions.",
        "Current position: 3 of the queue",  # a count, not a place
    ],
)
def test_a_place_the_label_does_not_give_the_user_is_not(text):
    assert state(text) == []


def test_a_blank_in_a_quoted_or_block_quoted_reply_is_for_the_model_to_fill():
    quoted = '- "¡Perfecto! Tu cita del [fecha] a las [hora] con [Doctor] está confirmada."\n'
    assert [v for v in find_volatile(quoted) if v.kind == "placeholder"] == []
    block = "> ¡Perfecto! Tu cita del [fecha] a las [hora] con [Doctor] está confirmada ✅\n"
    assert [v for v in find_volatile(block) if v.kind == "placeholder"] == []
    told = "The server you are in is called: [Server Name]\n"
    assert [v.value for v in find_volatile(told)] == ["[Server Name]"]


def test_the_name_of_the_person_served_after_a_possessive():
    assert state("The customer's name is Ana and is 34 years old.") == ["Ana"]
    assert state("The patient’s name: Ana Silva\n") == ["Ana Silva"]
    # a thing's name is no person's
    assert state("The store's name is Acme. Its name is Bob.") == []


def test_a_possessive_name_under_a_colon_is_a_name_only_alone_on_its_line():
    assert state("If you don't know the customer's name: Ask politely.") == []
    assert state("Remember the caller's name: Always confirm it first.") == []
