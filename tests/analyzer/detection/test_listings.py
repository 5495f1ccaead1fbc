"""analyzer.detection.listings: a bare "Date:" item of a listed event or of a record shown as
content (a search result, an article) is that event's or record's moment, not today's; the same
item beside no record fields, or in an environment block, is read as before."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile
from analyzer.detection.listings import bare_moment, record_field

RESULTS = """### Search Results (context data)
--- ITEM ---
ID: 92351
Title: Sales staff wanted
URL: https://example.com/92351/
Date: 2025-07-31
Content: full time, Okayama.

--- ITEM ---
- **Title:** Nurse, night shift
- **Source:** jobs board
- **Date:** 2025-06-13
"""


def test_a_records_date_is_the_records():
    assert find_volatile(RESULTS) == []
    at = RESULTS.index("2025-07-31")
    start = bare_moment(RESULTS, at)
    assert start == RESULTS.rindex("\n", 0, at) + 1 and record_field(RESULTS, start)


@pytest.mark.parametrize(
    "text",
    [
        "## Session\nUser: Ana\nDate: 2025-07-31\n",  # no record fields: the session's date
        "Title: Daily brief\n\nDate: 2025-07-31\n\nURL: https://example.com\n",  # other paragraphs
        "ID: 7\nDate: 2025-07-31\n",  # one field is no record
    ],
)
def test_a_bare_date_beside_no_record_is_still_today(text):
    assert "2025-07-31" in [v.value for v in find_volatile(text)]


def test_a_labelled_current_date_in_a_record_like_block_is_not_a_bare_item():
    text = "ID: 1\nTitle: Status\nToday's date: 2025-07-31\n"
    assert "2025-07-31" in [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    "hours", ["勤務時間：9:00〜18:00", "营业时间 9:00至18:00", "Öffnungszeiten 9:00 bis 18:00"]
)
def test_opening_hours_in_other_languages_are_a_range_not_the_clock(hours):
    assert find_volatile(hours) == []


def test_a_clock_time_with_no_range_is_found():
    assert [v.value for v in find_volatile("当前时间：14:05")] == ["14:05"]


@pytest.mark.parametrize(
    "hours",
    [
        "Call only between 08:00 and 18:00.",
        "Öffnungszeiten zwischen 9:00 und 17:00",
        "entre las 9:00 y las 17:00",
    ],
)
def test_between_two_times_is_a_range(hours):
    assert find_volatile(hours) == []


def test_a_time_before_an_and_that_opens_no_range_is_found():
    assert "14:05" in [v.value for v in find_volatile("Current time: 14:05 and the date is 2025-04-24")]
