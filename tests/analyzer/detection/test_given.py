"""analyzer.detection.given: place and weather slots handed over as the material are content."""

from __future__ import annotations

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
