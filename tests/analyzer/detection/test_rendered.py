"""analyzer.detection.rendered: values a live app has rendered as plain text, found at their labels and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection import rendered_dates


def values(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind != "today-phrase"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("State (refreshed every step):\n- step: 48213 of at most 25\n", "48213"),
        ("- elapsed: 412 s\n", "412 s"),
        ("Dialogue turn: 17\n", "17"),
        ("- Turn number: 7\n", "7"),
        ("- Requests left this month: 120\n", "120"),
        ("Attempts: 3 of 5\n", "3"),
        ("Runde: 4\n", "4"),
    ],
)
def test_a_number_under_a_counter_label_is_found(text, value):
    assert values(text) == [value]


@pytest.mark.parametrize(
    "text",
    [
        "Step 1: read the file.\nStep 2: write the summary.\n",
        "Version: 4.2\n",
        "Max steps: 25\n",
        "Requests per minute: 60\n",
        "- step: {step_number}\n",  # a slot: the slot rules read it
        "Turn left at the corner: 3 blocks\n",
        "- steps total: 5\n",
    ],
)
def test_steps_limits_and_versions_are_not_counters(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("**User:** Ana\n", "Ana"),
        ("**User location:** Istanbul\n", "Istanbul"),
        ("Current user: Ana\n", "Ana"),
        ("Username: ana_99\n", "ana_99"),
        ("The user's email: ana@example.com\n", "ana@example.com"),
        ("E-Mail des Benutzers: ana@example.com\n", "ana@example.com"),
        ("Nom de l'utilisateur : Ana\n", "Ana"),
        ("Nombre del usuario: Ana\n", "Ana"),
        ("Nome do usuário: Ana\n", "Ana"),
        ("Nome utente: Ana\n", "Ana"),
        ("nazwa użytkownika: Ana\n", "Ana"),
        ("email użytkownika: ana@example.com\n", "ana@example.com"),
        ("Naam gebruiker: Ana\n", "Ana"),
        ("Имя пользователя: Анна\n", "Анна"),
        ("用户名：张三\n", "张三"),
        ("ユーザー名: 田中\n", "田中"),
        ("사용자 이름: 민수\n", "민수"),
        ("- The server you are in is called: Gaming Hub\n", "Gaming Hub"),
        ("Local time now: 13:52. Weather: Sunny, 18 °C. Enjoy the day.\n", "Sunny, 18 °C"),
    ],
)
def test_a_value_under_a_per_user_label_is_found(text, value):
    assert value in values(text)


@pytest.mark.parametrize(
    "text",
    [
        "Name: Acme Assistant\n",  # the assistant's own name
        "Location: see the docs\n",
        "Customer support: Mon-Fri\n",
        "User guide: Chapter Two\n",
        "Customer: Contoso\n",  # a client of the deployment, not the person asking
        "User language: English\n",  # a preference is a setting
        "User role: Admin\n",  # per role, not per user
        "User: Hello\nAssistant: Hi! How can I help?\n",  # a transcript line
        "Example:\nUser: Tom\nAssistant: Hello Tom!\n",  # a fixed example user in a few-shot block
        "Examples:\nUser: Tom\n\nEnd.",
        "- Hobbies: games\n  - Username: Blaze\n",  # a detail of the item above
        "Weather: use the weather tool for forecasts.\n",
        "User email: {{ email }}\n",  # a slot is read by the slot rules, not here
    ],
)
def test_decoys_of_per_user_labels_are_not_found(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


def test_fields_and_memories_under_a_heading_about_the_user_are_found():
    block = (
        "# Customer Context\nFirst Name: Ana\nLast Name: Silva\nAge: 48\nMembership Status: Gold\n\nBe kind."
    )
    assert values(block) == ["Ana", "Silva", "48", "Gold"]
    indented = "template: |\n    # Customer Context\n    First Name: Ana\n    Age: 48\n\n    Be kind."
    assert values(indented) == ["Ana", "48"]  # a heading inside a YAML block
    assert values("a { color: #fff; }\n# Styles\nFirst Name: Ana\n") == []  # no heading about the user
    memory = (
        "# Long-term memory about this user (from previous sessions)\n"
        "Note: background knowledge about the user from past interactions.\n"
        "- Prefers short answers.\n- Has a dog called Rex.\n\nAnswer briefly."
    )
    assert values(memory) == ["Prefers short answers.\n- Has a dog called Rex."]


@pytest.mark.parametrize(
    "text",
    [
        "# User profile rules\n- Never reveal the profile.\n- Use it sparingly.\n",  # instructions
        "WHEN NOT TO DISPATCH:\n- Saving/reading user memory\n- Casual conversation\n",  # a list item, no heading
        "Known facts about the user:\n- Likes: {likes}\n",  # a template's slot: read as a slot
        "# Team memory\n- Deploys happen on Fridays.\n",
    ],
)
def test_lists_that_are_not_the_users_memory_are_not_found(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("my current timezone: Europe/Warsaw\n", "Europe/Warsaw"),
        ("Current date is: 2025-04-24 13:52:03 and I'm in Europe/Warsaw timezone.\n", "Europe/Warsaw"),
        (
            "Bieżąca data to: 2025-04-24 13:52:03 i jestem w strefie czasowej Europe/Warsaw.\n",
            "Europe/Warsaw",
        ),
        ("The user's timezone is America/New_York.\n", "America/New_York"),
    ],
)
def test_the_users_own_timezone_is_found(text, value):
    assert value in values(text)


@pytest.mark.parametrize(
    "text",
    [
        "The deployment runs in (timezone: Europe/Rome).\n",
        "Server timezone: Europe/Rome\n",
        "Dates are shown in Europe/Berlin time.\n",
    ],
)
def test_a_deployments_timezone_is_not_found(text):
    assert values(text) == []


def test_a_place_right_after_a_kept_date_is_found():
    assert values("Today is Thursday, 24 April 2025 in Istanbul.\n") == [
        "Thursday, 24 April 2025",
        "Istanbul",
    ]


@pytest.mark.parametrize(
    "text", ["Founded on 12 May 2001 in Lisbon.\n", "Our office is open Monday to Friday in London.\n"]
)
def test_a_place_after_a_fixed_date_is_not_found(text):
    assert values(text) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "수집 기간: Thursday, April 17, 2025 - Wednesday, April 23, 2025 (지난 주)\n",
            ["Thursday, April 17, 2025", "Wednesday, April 23, 2025"],
        ),
        (
            "Report for the last week (April 17, 2025 to April 23, 2025)\n",
            ["April 17, 2025", "April 23, 2025"],
        ),
        (
            "## 지난 주 AI 트렌드 정리: 4월 4주차 (Thursday, April 17, 2025 - Wednesday, April 23, 2025)\n",
            ["4", "4", "Thursday, April 17, 2025", "Wednesday, April 23, 2025"],
        ),
        ("- Last login: Wednesday, April 23, 2025\n", ["Wednesday, April 23, 2025"]),
    ],
)
def test_a_rendered_period_and_the_users_last_login_are_found(text, found):
    assert values(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "Released on April 17, 2025 - April 23, 2025\n",
        "Sale: April 17, 2025 - April 23, 2025\n",  # a range, but no period counted back from today
        "## Release notes: 4월 4주차\n",
        "Example: Last login: Wednesday, April 23, 2025\n",
    ],
)
def test_fixed_ranges_and_examples_are_not_found(text):
    assert values(text) == []


def test_the_helpers_read_only_their_own_wording():
    assert rendered_dates.user_event("- Last login: ") and rendered_dates.user_event("Member since ")
    assert not rendered_dates.user_event("Last updated: ")
    text = "Last week: April 17, 2025 - April 23, 2025"
    a, b = text.index("April 17"), text.index("April 23")
    dates = [(a, a + 14), (b, b + 14)]
    assert rendered_dates.period_bound(text, a, a + 14, dates) and rendered_dates.period_bound(
        text, b, b + 14, dates
    )
    assert not rendered_dates.period_bound(text, a, a + 14, dates[:1])  # one date alone is no range


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("## Профиль пользователя\n- Любит чай.\n- Работает ночью.\n\n## Правила", "Работает"),
        ("用户设定：\n- 喜欢喝茶。\n- 晚上工作。\n\n规则", "晚上"),
        ("**Profil de l'utilisateur :**\n- aime le thé\n- travaille la nuit\n\nSois bref.", "la nuit"),
        ("Kullanıcı profili:\n- Çay sever.\n- Gece çalışır.\n\nKısa ol.", "Gece"),
        ("## Benutzerprofil\n- Stadt: Lissabon\n\nSei kurz.", "Lissabon"),
    ],
)
def test_the_lines_under_a_user_profile_heading_in_other_languages(text, value):
    assert any(value in v.value for v in find_volatile(text) if v.kind == "state")


@pytest.mark.parametrize(
    "text",
    [
        "Kullanıcı kılavuzu:\n- Menüyü açın.\n",  # a user guide, not the user
        "## Benutzerprofil\n{profile}\n",  # a slot: the slot rules read it
    ],
)
def test_not_under_other_headings_or_slots(text):
    assert [v for v in find_volatile(text) if v.kind == "state"] == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("- Користувач: Ana\n", "Ana"),  # the user, in Ukrainian and Turkish
        ("- Kullanıcı: Ayşe\n", "Ayşe"),
        ("- 本地未来天气：Sunny, 18 °C\n", "Sunny, 18 °C"),  # the weather, in Chinese, Russian and Korean
        ("Погода: ясно, 18 °C\n", "ясно, 18 °C"),
        ("오늘 날씨: 맑음, 18°C\n", "맑음, 18°C"),
    ],
)
def test_the_user_and_the_weather_labelled_in_more_languages(text, value):
    assert [v.value for v in find_volatile(text)] == [value]


def test_a_ukrainian_dialogue_line_is_no_users_name():
    assert find_volatile("Користувач: Привіт\nБот: Добрий день\n") == []


def test_a_games_standing_under_its_label_is_read_each_turn():
    for text in ("Current Affinity: 35\n", "- 好感度：35\n", "Stamina: 35\n"):
        assert [v.value for v in find_volatile(text)] == ["35"], text
    assert find_volatile("Affinity: high\n") == []  # a word, not a reading
