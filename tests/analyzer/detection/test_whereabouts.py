"""analyzer.detection.whereabouts: the weather now and the user's coordinates, found; the climate and
a fixed address's coordinates not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def values(text: str) -> list[str]:
    return [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    "text, value",
    [
        ("Weather in Oslo right now: 4°C, light rain.", "4°C, light rain"),
        ("Weather now: 4°C, light rain.", "4°C, light rain"),
        ("Weather for Berlin: 12°C", "12°C"),
        ("Weather: Sunny, 18 °C", "Sunny, 18 °C"),
    ],
)
def test_the_weather_now_under_its_key_and_place(text, value):
    assert values(text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "The weather is typical: 18 °C in May.",
        "Weather in May is typical: 18°C",
        "Weather tools: get_weather reads 18°C",
    ],
)
def test_the_climate_and_other_weather_words_are_not(text):
    assert values(text) == []


def test_coordinates_under_a_where_label():
    assert values("Location: 52.5200, 13.4050") == ["52.5200, 13.4050"]
    assert values("Current position: -33.8688, 151.2093.") == ["33.8688, 151.2093"]
    assert values("Our office is at 52.5200, 13.4050.") == []
    assert values("Position: 3 of 10") == []


@pytest.mark.parametrize(
    "text, found",
    [
        ("The user is located in {{city}}, {{country}} {{flag}}.", ["{{city}}", "{{country}}", "{{flag}}"]),
        ("Remember the current location is {city_name} City, {pref_name}, {country_name}.", None),
        ("The customer is currently based in {town}.", ["{town}"]),
        ("User's location: {place}", ["{place}"]),
    ],
)
def test_slots_said_to_be_where_the_user_is_now(text, found):
    slots = [v.value for v in find_volatile(text) if v.kind == "placeholder"]
    assert slots == (found or ["{city_name}", "{pref_name}", "{country_name}"])


@pytest.mark.parametrize(
    "text",
    [
        "Find the current time in {city}.",
        "Our office is located in {city}, {country}.",
        "List hotels located in {city}, {region} for the trip.",
    ],
)
def test_a_place_asked_about_or_the_deployments_own_is_not(text):
    assert [v.value for v in find_volatile(text) if v.kind == "placeholder"] == []


@pytest.mark.parametrize(
    "text",
    [
        "Current position: {job_title}",
        "Our customer support team is based in {office_city}.",
        "The customer's order is located at {warehouse}.",
    ],
)
def test_other_things_located_somewhere_are_not_the_user(text):
    assert find_volatile(text) == []


def test_content_after_the_users_place_is_not_part_of_it():
    assert [v.value for v in find_volatile("The user is located in {city}, {question}")] == ["{city}"]


@pytest.mark.parametrize(
    "text",
    [
        "<user-preferences>\n  The user has the following system preferences:\n  - Language: English\n"
        "  - Timezone: America/New_York\n",
        "About me:\n- Name: Ana\n- Timezone: Europe/Lisbon\n",
    ],
)
def test_a_timezone_in_a_block_about_the_user_is_theirs(text):
    assert [v.value for v in find_volatile(text) if v.kind == "state"][-1:] in (
        ["America/New_York"],
        ["Europe/Lisbon"],
    )


@pytest.mark.parametrize(
    "text",
    [
        "Server settings:\n- Timezone: America/New_York\n",
        "Timezone: Europe/Lisbon\n",
        "The user has the following preferences:\n\n- Timezone: Europe/Lisbon\n",  # a blank line ends the block
        "User settings:\n- Deployment timezone: Europe/Lisbon\n",
    ],
)
def test_a_timezone_of_no_user_block_is_configuration(text):
    assert [v for v in find_volatile(text) if v.value.startswith(("America", "Europe"))] == []


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("* The user is in Australia.\n* Be nice.", "Australia"),
        ("The user's city is Porto, Portugal.", "Porto, Portugal"),
        ("The user is currently based in New York City, and likes tea.", "New York City"),
    ],
)
def test_the_place_the_user_is_in_said_as_a_fact(text, place):
    assert [v.value for v in find_volatile(text) if v.kind == "state"] == [place]


@pytest.mark.parametrize(
    "text",
    [
        "If the user is in Europe, use metric units.",  # a condition
        "Example: the user is in Paris.",
        "The user is in a hurry.",  # no place
        "The name of the user is Arnaud.",  # no "in": not where they are
        "The user is in Plan Mode. Do not edit files.",  # a mode, a tool, a screen: not a place
        "The user is in VS Code.",
        "The user is at Checkout.",
    ],
)
def test_no_place_in_a_condition_an_example_or_without_one(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []
