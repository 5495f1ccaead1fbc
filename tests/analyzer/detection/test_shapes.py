"""analyzer.detection.shapes: the one pass finds anchors and month names together, found and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection import phrases
from analyzer.detection.shapes import _ANCHOR_OR_MONTH, scan


def dates(text: str) -> list[str]:
    return [text[c.start : c.end] for c in scan(text) if c.kind == "date" and c.shape == "text"]


def test_a_month_right_after_an_anchor_is_still_read():
    # "1,M" and "7.S" are anchors' matches: the month each ends in starts a date all the same (a
    # year of 3xxx is no anchor of its own, so only the month finds these)
    assert dates("Totals 1,Mar 3, 3025 and 7.Sep 9, 3024") == ["Mar 3, 3025", "Sep 9, 3024"]
    assert dates("Due: Nov 30, 3026. Released Jan 2, 3024") == ["Nov 30, 3026", "Jan 2, 3024"]


def test_words_that_only_look_like_months_start_no_date():
    assert dates("Jar 3, 2025; Market 5, 2024; Octopus 1, 2020") == []
    assert dates("Mark said 30 days") == []


def test_the_pass_finds_the_months_a_pass_of_their_own_finds():
    for text in ("Jan Feb 5Jan 1,Mar 1.Nov {Dec} $May", "JanuaryJun Jul2 x9Aug", "İMar 3, Sep"):
        found = [
            a.start() if text[a.start()].isalpha() else a.end() - 1 for a in _ANCHOR_OR_MONTH.finditer(text)
        ]
        assert [k for k in found if text[k : k + 3] in phrases.MONTHS] == phrases.month_starts(text)


def test_an_id_in_inline_code_after_its_label_is_still_the_sessions():
    ids = [
        v.value
        for v in find_volatile("Session ID: `4f2a9c1e7b3d`\nTrace ID: `9b1deb4d3b7d4bad`")
        if v.kind == "request-id"
    ]
    assert ids == ["4f2a9c1e7b3d", "9b1deb4d3b7d4bad"]
    assert [v for v in find_volatile("The format of a session ID: `<hex>`") if v.kind == "request-id"] == []


def test_the_stock_made_up_epoch_is_no_clock_reading():
    assert find_volatile('"ts": 1234567890') == [] and find_volatile("Now: 1234567890123") == []
    assert [v.value for v in find_volatile('"ts": 1712345678')] == ["1712345678"]


def test_telling_the_time_in_other_languages():
    for text in ("Son las 15:42.", "Sono le 15:42.", "Klockan är 15:42.", "Heure actuelle : 15 h 42"):
        assert len([v for v in find_volatile(text) if v.kind == "time"]) == 1, text
    assert find_volatile("Ouvert 24 h 24, 7 j 7.") == []


@pytest.mark.parametrize(
    "text, value",
    [
        (
            "The current date and hour is Thu May 14 2026 19:00:00 GMT+0000 (Coordinated Universal Time).",
            "19:00:00 GMT+0000 (Coordinated Universal Time)",
        ),  # JavaScript's Date.toString(), whole
        ("Time: 10:00 GMT-05:00", "10:00 GMT-05:00"),  # an offset is no range ("-05:00")
        ("Current time: 09:15:02 UTC+5:30", "09:15:02 UTC+5:30"),
    ],
)
def test_a_clock_keeps_its_offset_and_zone_name(text, value):
    assert value in [v.value for v in find_volatile(text)]


def test_a_schedule_with_an_offset_is_still_a_schedule():
    assert find_volatile("Support is open 09:00-17:00 UTC+1 on weekdays.") == []


@pytest.mark.parametrize(
    "text",
    [
        "Support hours:\n- Weekdays 09:00 UTC-17:00 UTC\n",  # a range written without spaces
        "Shift A runs 06:00 UTC-14:00 UTC, shift B runs 14:00 UTC-22:00 UTC.",
        "The nightly backup runs, 02:00 GMT-05:00, by cron.",  # an offset's colon is no second
    ],
)
def test_an_offset_never_swallows_a_range_nor_makes_a_clock_read_to_the_second(text):
    assert find_volatile(text) == []


def test_a_dotnet_format_spec_with_spaces_is_part_of_its_slot():
    from analyzer.detect import find_volatile

    for slot in ("{DateTime.Now:MMM dd, yyyy}", "{DateTime.Now:hh:mm tt}", "{now:%Y-%m-%d %H:%M}"):
        assert [v.value for v in find_volatile(f'dict["current_date"] = $"{slot}";')] == [slot]
    assert find_volatile("Use {type: string} here.") == []


def test_an_n8n_expression_with_braces_and_lines_of_its_own_is_one_slot():
    text = (
        "Data e hora atual: {{ (() => {\n  const now = $now.setZone('America/Sao_Paulo')\n"
        "  return now.toFormat('dd/MM/yyyy')\n})() }}\nProdutos: {{ $json.items.map(i => { return i.sku }).join(', ') }}\n"
    )
    found = find_volatile(text)
    assert [v.value[:12] for v in found] == ["{{ (() => {\n"] and found[0].value.endswith("})() }}")
    assert find_volatile("Use {{ if x { y } }} here.\n") == []  # no $ or ( first: not n8n's JavaScript
    assert find_volatile("Broken {{ (() => { never closed\n") == []


def test_a_dollar_slot_in_prose_is_judged_by_its_name():
    text = "Nous sommes le $date et il est $time. Tu parles à $user_name."
    assert [v.value for v in find_volatile(text)] == ["$date", "$time", "$user_name"]
    # code's variables, prices, shell's $USER, a call or a member are no prose slots
    for code in (
        "    $todayDate = Carbon::now();",
        "Price is $5.",
        "echo $USER",
        "$now->format('Y')",
        "x = $date(1)",
    ):
        assert find_volatile(code) == [], code


def test_a_dify_conversation_variable_is_per_session_but_not_its_history():
    text = "Slots: {{#conversation.cv_slots#}}\nH: {{#conversation.History#}}\nQ: {{#sys.query#}}\n"
    assert [v.value for v in find_volatile(text)] == ["{{#conversation.cv_slots#}}"]
