"""analyzer.detection.dates and .calendar: dates in other languages and scripts, found and not found."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.calendar import MONTH_OF, weekday_name


def found(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.value) for v in find_volatile(text) if v.kind != "today-phrase"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("今天是2025年4月24日 星期四。", "2025年4月24日 星期四"),
        ("当前日期：2025年04月24日", "2025年04月24日"),
        ("今日は2025年4月24日(木)です。", "2025年4月24日(木)"),
        ("本日は令和7年4月24日です。", "令和7年4月24日"),
        ("오늘은 2025년 4월 24일 목요일입니다.", "2025년 4월 24일 목요일"),
        ("Heute ist Donnerstag, 24. April 2025.", "Donnerstag, 24. April 2025"),
        ("Aktuelles Datum: 24.04.2025", "24.04.2025"),
        ("Nous sommes le jeudi 24 avril 2025.", "jeudi 24 avril 2025"),
        ("Hoy es jueves, 24 de abril de 2025.", "jueves, 24 de abril de 2025"),
        ("Hoje é quinta-feira, 24 de abril de 2025.", "quinta-feira, 24 de abril de 2025"),
        ("Сегодня 24 апреля 2025 г., четверг.", "24 апреля 2025 г., четверг"),
        ("Oggi è giovedì 24 aprile 2025.", "giovedì 24 aprile 2025"),
        ("Today: Thursday, 24 April 2025", "Thursday, 24 April 2025"),
        ("Date: 24/04/2025", "24/04/2025"),
        ("Yesterday was April 23, 2025.", "April 23, 2025"),
        ("Hari ini adalah Kamis, 24 April 2025.", "Kamis, 24 April 2025"),
        ("I dag er torsdag den 24. april 2025.", "torsdag den 24. april 2025"),
        ("Dnešní datum: 24. dubna 2025", "24. dubna 2025"),
        ("Tänään on torstai 24. huhtikuuta 2025.", "torstai 24. huhtikuuta 2025"),
        ("Astăzi este joi, 24 aprilie 2025.", "joi, 24 aprilie 2025"),
        ("Σήμερα είναι Πέμπτη, 24 Απριλίου 2025.", "Πέμπτη, 24 Απριλίου 2025"),
        ("التاريخ الحالي: 24 أبريل 2025", "24 أبريل 2025"),
        ("היום: 24 באפריל 2025", "24 באפריל 2025"),
        ("Hôm nay là ngày 24/04/2025.", "24/04/2025"),
    ],
)
def test_a_date_of_today_in_any_language_is_found_whole(text, value):
    assert ("date", value) in found(text)


def test_a_cjk_date_with_its_clock_time_is_one_timestamp():
    assert found("现在时间：2025年04月24日 14:05") == [("time", "2025年04月24日 14:05")]


@pytest.mark.parametrize(
    "text",
    [
        "Verzonden 06/06/2025 om 10:12",
        "Enviado 06/06/2025 às 10:12",
        "Enviado 06/06/2025 a las 10:12",
        "Gesendet 06/06/2025 um 10:12",
        "Dikirim 06/06/2025 pukul 10:12",
    ],
)
def test_a_date_joined_to_its_time_by_a_word_of_any_language_is_kept_with_it(text):
    assert found(text) == [("date", "06/06/2025"), ("time", "10:12")]


def test_a_date_followed_by_other_words_then_a_time_is_not_joined():
    assert found("Released 06/06/2025 and fixed since then; the build takes 10:12 minutes") == []


def test_a_kept_date_restated_in_brackets_is_found_again():
    assert found("The current date is 2025-07-14 (Jul 14, 2025). Be brief.") == [
        ("date", "2025-07-14"),
        ("date", "Jul 14, 2025"),
    ]
    assert found("Data e horário em Fortaleza: 14/07/2025 10:12") == [
        ("date", "14/07/2025"),
        ("time", "10:12"),
    ]


def test_us_numeric_date_time_and_current_utc_label():
    assert found("Sent 4/26/2025, 1:52:03 PM here") == [("date", "4/26/2025"), ("time", "1:52:03 PM")]
    assert found("Current UTC: 2025-04-24 13:52:03") == [("time", "2025-04-24 13:52:03")]


@pytest.mark.parametrize(
    "text",
    [
        "训练数据截止到2023年10月。",  # a cut-off, and no day
        "知识截止日期：2024年6月1日",
        "Wissensstand: 24. April 2024",
        "Knowledge cutoff: 2024-06",
        "Die Version vom 3. März 2021 ist veraltet.",  # running prose, no now label
        "如果今天是2024年6月1日，下一次触发在6月3日。",  # a supposition
        "오늘이 2024-06-01이라면 다음 실행은 2024-06-03입니다.",
        "Gegründet am 12. Mai 1998 in Berlin.",
        "Tanggal lahirmu: 01 Agustus 2002",  # a birth date
        "Next US election: November 7, 2028",  # an event's date
        "The release was on 2024-01-02 (January 2, 2024).",  # a fixed date restated
        'Jawab singkat, kayak: "Oke, tanggal 31 Mei 2025 ya"',  # an example reply
        "Free Webinar: Prompt caching 101\n- Date: 24 April 2025\n- Time: 14:00 CET",  # an event's moment
    ],
)
def test_cut_offs_history_and_suppositions_are_not_findings(text):
    assert [k for k, _ in found(text) if k in ("date", "time")] == []


def test_month_and_weekday_tables():
    assert MONTH_OF["avril"] == MONTH_OF["апреля"] == MONTH_OF["abr"] == 4
    assert weekday_name("Thursday", 1) == "Friday"
    assert weekday_name("jueves", 1) == "viernes"
    assert weekday_name("星期日", 1) == "星期一"
    assert weekday_name("MONTAG", -1) == "SONNTAG"


def test_a_bare_date_item_is_an_events_only_under_an_event_in_its_paragraph():
    listed = "Current context:\n- Date: 24 April 2025\n- Time: 14:00"
    assert found(listed) == [("date", "24 April 2025"), ("time", "14:00")]
    apart = "Our webinar series is over.\n\nCurrent context:\n- Date: 24 April 2025"
    assert found(apart) == [("date", "24 April 2025")]
    prose = "You are EventBot. You help users discover concerts and events near them.\nDate: 2025-04-24"
    assert found(prose) == [("date", "2025-04-24")]  # a sentence about events is no event's title


def test_a_weekday_right_after_a_kept_date_or_time_is_kept_with_it():
    assert found("当前时间：2025-04-24 13:52:03 星期四") == [
        ("time", "2025-04-24 13:52:03"),
        ("date", "星期四"),
    ]
    assert found("Today: 2025-04-24 (Thursday), 13:52") == [
        ("date", "2025-04-24"),
        ("date", "Thursday"),
        ("time", "13:52"),
    ]
    assert found("Released 2024-01-02 Tuesday.") == []  # the date was not kept: nor is its weekday
    for text, date in (
        ("Today: 2025-04-24, Montréal.", "2025-04-24"),
        ("Hari ini 24-04-2025 minggu ini ada rapat", "24-04-2025"),  # "minggu ini": this week
        ("Today: 2025-04-24, sat down", "2025-04-24"),
    ):
        assert found(text) == [("date", date)]  # only the date: no weekday there
    assert found("The date is 24-Apr-2025.") == [("date", "24-Apr-2025")]


def test_a_time_in_the_clause_after_a_kept_date_goes_with_it():
    assert found("Heute ist der 24.04.2025, es ist 13:52 Uhr.") == [("date", "24.04.2025"), ("time", "13:52")]
    assert found("Nous sommes le 24/04/2025 et il est 13h52.") == [("date", "24/04/2025"), ("time", "13h52")]
    assert found("Gesendet 06/06/2025, es ist 10:12") == []  # no date kept before it
