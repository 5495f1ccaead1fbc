"""proxy.bench.rewrite_render: a labelled value rendered as a live app renders it a day or a minute on."""

from __future__ import annotations

import pytest

from proxy.bench.rewrite_render import render


@pytest.mark.parametrize(
    ("value", "later"),
    [
        ("2025-04-24", "2025-04-25"),
        ("Thursday, 24 April 2025", "Friday, 25 April 2025"),
        ("4/26/2025, 1:52:03 PM", "4/27/2025, 1:53:03 PM"),
        ("24/04/2025", "25/04/2025"),
        ("2025年4月24日 星期四", "2025年4月25日 星期五"),
        ("2025년 4월 24일 목요일", "2025년 4월 25일 금요일"),
        ("jueves, 24 de abril de 2025", "viernes, 25 de abril de 2025"),
        ("24 апреля 2025 г., четверг", "25 апреля 2025 г., пятница"),
        ("09:58 AM on January 10, 2025", "09:59 AM on January 11, 2025"),
        ("February 28, 2025", "February 27, 2025"),  # back a day where the month ends
        ("48,213", "59,324"),
    ],
)
def test_dates_a_day_on_and_times_a_minute_on_in_their_own_format(value, later):
    assert render(value, 0) == value and render(value, 1) == later


def test_slots_are_filled_by_what_their_name_or_label_says_and_differ_between_renderings():
    assert render("{{CURRENT_DATE}}", 0) == "Thursday, April 24, 2025"
    assert render("{tokens_left}", 0) != render("{tokens_left}", 1)
    assert render("{}", 0, "The current date is ") == "Thursday, April 24, 2025"
    assert render("%Y-%m-%d", 1) == "2025-04-25"
    assert render("main", 1) != "main"
    assert render("$date", 0) == "Thursday, April 24, 2025"  # string.Template's slot, filled too


def test_a_period_s_bounds_are_other_days_than_today_and_move_with_it():
    assert render("{{ today }}", 0) == "Thursday, April 24, 2025"
    assert render("{{ start_date }}", 0) == "Thursday, April 17, 2025"
    assert render("{{ end_date }}", 1) == "Thursday, April 24, 2025"
    assert render("{{ period_start }}", 1) == "Friday, April 18, 2025"


def test_a_month_week_or_year_is_the_same_a_day_later():
    assert render("{{ month }}", 0, "정리: ") == render("{{ month }}", 1, "정리: ") == "4"
    assert render("{current_month}", 1, "The month is ") == "April"
    assert render("{{ week }}", 1) == "4" and render("{year}", 1) == "2025"


def test_a_memory_block_is_another_user_s_memories_and_machine_memory_a_size():
    first, second = render("{long_term_memory}", 0), render("{long_term_memory}", 1)
    assert first.startswith("- ") and "\n" in first and first != second
    assert render("{free_memory}", 0) == "3.2 GB"


def test_a_slot_s_own_strftime_format_and_a_moment_s_name():
    assert render('<%= Time.now.strftime("%H:%M") %>', 1) == "13:53"
    assert render("<%= weather.summary %>", 0) != render("<%= weather.summary %>", 1)
    assert render("{{ generated_at }}", 0) == "2025-04-24 13:52:03"
    assert render("{fecha_actual}", 0) == "Thursday, April 24, 2025"


def test_an_unnamed_blank_after_in_is_a_place_elsewhere_what_its_label_says():
    assert render("_______", 1, "Today is Thursday in ") == "Ankara"
    assert render("_______", 0, "Tokens left: ") == "48213"
    assert render("[Server Owner]", 0) == "Ana"


def test_an_epoch_is_minutes_on_and_a_uuid_keeps_its_version():
    assert render("1764511512345", 1) == "1764511572345" and render("1764515112", 2) == "1764515232"
    assert render("0012345678", 1) == "1123456789"  # not a time of this century: digits changed
    later = render("c0ffee42-9a7d-4e1b-8f3a-5d6e7f809a1b", 1)
    assert later != "c0ffee42-9a7d-4e1b-8f3a-5d6e7f809a1b" and (later[14], later[19]) == ("4", "8")


def test_a_slot_whose_name_says_nothing_is_what_its_label_says():
    assert render("${EXPR_4}", 1, "Today's date: ") == "Friday, April 25, 2025"
    assert render("${EXPR_4}", 0, "You have ") == "48213"
    assert render("{{ foo }}", 1, "The time now: ") == "2025-04-25 13:53:03"


def test_a_user_s_information_is_another_user_s_details():
    first, second = render("{{ user_information }}", 0), render("{{ user_information }}", 1)
    assert first.startswith("Name: ") and "\n" in first and first != second


def test_git_chat_name_and_count_slots_render_as_an_app_renders_them():
    assert render("{{.GitBranch}}", 0) == "main" and render("{{.GitBranch}}", 1) != "main"
    status = render("{{.GitStatus}}", 0)
    assert status.startswith("M ") and "\n" in status and status != render("{{.GitStatus}}", 1)
    assert render("{{commit}}", 0, "- Git commit: ") == "a1b2c3d"
    assert render("{chatname}", 0) == "Family chat" and render("{membercount}", 1) == "13"
    assert render("{{ userfullname }}", 0) == "Ana"
    assert render("{server_hostname}", 0) != "Family chat"  # a host, not a chat's name
    assert render("{{GUILD_NAME}}", 0) == "Family chat" and render("{channel_title}", 1) == "Book club"
    assert render("{{ user }}", 0) == "Ana" and render("{{ userAlias }}", 1) == "Ben"  # the user's name
    assert render("{{branch_name}}", 0) == "main"  # a branch, not a person
    assert render("{{local_address}}", 0) == "Istanbul"  # a place
    assert render("{{ data_atual }}", 0) == "Thursday, April 24, 2025"  # today's date, in Portuguese
    assert render("{current_weekday}", 1) == "Friday" and render("{day_of_week}", 0) == "Thursday"
    assert (
        render("{location_name}", 0) == "Istanbul" and render("{user_data}", 0) != "Thursday, April 24, 2025"
    )
    assert (
        render("{ip_address}", 0) != "Istanbul" and render("{actual_data}", 0) != "Thursday, April 24, 2025"
    )


def test_a_slot_name_marked_inside_its_braces_is_the_slot():
    from proxy.bench.rewrite_corpus import labelled

    assert labelled("- Chat: {⟦chatname⟧} (ID: ⟦{chatid}⟧)") == (
        ["- Chat: ", " (ID: ", ")"],
        ["{chatname}", "{chatid}"],
    )
    assert labelled("${⟦x⟧}") == (["${", "}"], ["x"])  # a JS interpolation keeps its braces in the text
