"""Volatile-content detectors: recall on each kind, exact spans, and precision."""

from __future__ import annotations


import pytest

from tests.support import FIXTURES as ALL_FIXTURES
from analyzer.detect import Volatile, entropy, find_volatile

FIXTURES = ALL_FIXTURES / "detect"


def kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.value) for v in find_volatile(text)]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Current time: 14:05 UTC.", "time", "14:05 UTC"),
        ("It is 9:30 pm here", "time", "9:30 pm"),
        ("at 2024-01-05T10:00:00.123+02:00 the job ran", "time", "2024-01-05T10:00:00.123+02:00"),
        ("logged 2026-11-30 14:10:15 UTC", "time", "2026-11-30 14:10:15 UTC"),
        ('{"ts": 1700000000}', "time", "1700000000"),
        ("created_at=1700000000123", "time", "1700000000123"),
        ("Released 2026-11-30.", "date", "2026-11-30"),
        ("on Monday, November 30, 2026 we", "date", "Monday, November 30, 2026"),
        ("due 30 Nov 2026", "date", "30 Nov 2026"),
        ("due 11/30/2026", "date", "11/30/2026"),
        ("Today is Monday", "today-phrase", "Today is"),
        ("The current date is 30 November 2026", "today-phrase", "The current date is"),
        ("Hello {{ now }}", "placeholder", "{{ now }}"),
        ("Hello {{now | date('Y')}}", "placeholder", "{{now | date('Y')}}"),
        ("Now: {current_datetime}", "placeholder", "{current_datetime}"),
        ("Now: {now:%H:%M}", "placeholder", "{now:%H:%M}"),
        ("Date ${date}", "placeholder", "${date}"),
        ("At %(time)s", "placeholder", "%(time)s"),
        ("id <%= request_id %>", "placeholder", "<%= request_id %>"),
        ("run 550e8400-e29b-41d4-a716-446655440000 now", "uuid", "550e8400-e29b-41d4-a716-446655440000"),
        ("request_id: abc123def456", "request-id", "abc123def456"),
        ("X-Request-Id=7f9e2c1a", "request-id", "7f9e2c1a"),
        ("trace id: 4bf92f3577b34da6", "request-id", "4bf92f3577b34da6"),
        ("previous answer chatcmpl-9xQ2bLkP0aZ7mN3v", "request-id", "chatcmpl-9xQ2bLkP0aZ7mN3v"),
        ("tool toolu_01A09q90qw90lq917835lq9 result", "request-id", "toolu_01A09q90qw90lq917835lq9"),
        ("auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0", "jwt",
         "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0"),
        ("nonce 9f86d081884c7d659a2feaa0c55ad015 ok", "hex-id", "9f86d081884c7d659a2feaa0c55ad015"),
        ("key Zx81kLq0PmA7vN3cR5tY2wB9 ok", "base64-id", "Zx81kLq0PmA7vN3cR5tY2wB9"),
        ("blob dGhpcyBpcyBhIHJhbmRvbSBzZXNzaW9uIDQyMTc= ok", "base64-id", "dGhpcyBpcyBhIHJhbmRvbSBzZXNzaW9uIDQyMTc="),
    ],
)
def test_each_kind_with_exact_span(text, kind, value):
    found = find_volatile(text)
    match = [v for v in found if v.kind == kind]
    assert match, f"no {kind} in {text!r}: {found}"
    v = match[0]
    assert v.value == value
    assert text[v.start : v.end] == value


def test_iso_timestamp_wins_over_its_date_and_clock_parts():
    assert kinds("at 2024-01-05T10:00:00Z") == [("time", "2024-01-05T10:00:00Z")]


def test_jwt_is_one_finding_not_three_base64_ids():
    text = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0"
    assert [v.kind for v in find_volatile(text)] == ["jwt"]


def test_findings_are_ordered_and_disjoint():
    text = "req_id=a1b2c3d4e5 at 12:01:02 on 2026-11-30, uuid 550e8400-e29b-41d4-a716-446655440000"
    found = find_volatile(text)
    assert [v.start for v in found] == sorted(v.start for v in found)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))
    assert {v.kind for v in found} == {"request-id", "time", "date", "uuid"}


def test_severities():
    by_value = {v.value: v.severity for v in find_volatile("at 12:01 on 2026-11-30 {date} {now}")}
    assert by_value == {"12:01": "high", "2026-11-30": "low", "{date}": "medium", "{now}": "high"}
    sev = {v.value: v.severity for v in find_volatile("{date} and {now}")}
    assert sev == {"{date}": "medium", "{now}": "high"}


def test_negatives_fixture_has_zero_findings():
    text = (FIXTURES / "negatives.md").read_text()
    assert find_volatile(text) == []


def test_code_fences_and_inline_code_are_skipped_but_text_after_is_not():
    text = "```\nts=1700000000\n```\nnow 12:30:00"
    assert kinds(text) == [("time", "12:30:00")]


def test_time_range_is_static_but_single_time_is_not():
    assert kinds("open 09:00-17:00") == []
    assert kinds("open 09:00 to 17:00") == []
    assert kinds("sent at 09:00") == [("time", "09:00")]


def test_digest_labels_exempt_hex_but_bare_random_hex_is_found():
    sha = "3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b"
    assert kinds(f"commit {sha}") == []
    assert kinds(f"session {sha}") == [("hex-id", sha)]


def test_low_entropy_hex_and_words_are_not_ids():
    assert kinds("deadbeefdeadbeefdeadbeef") == []
    assert kinds("0000000000000000ff") == []
    assert kinds("SupercalifragilisticExpialidocious2024") == []


def test_static_dates_versions_changelogs_and_release_headings_are_not_findings():
    text = ("Acme API version 2023-06-01; header anthropic-version: 2023-06-01; api-version=2024-02-15-preview.\n"
            "## Changelog\n- 2024-03-15: v2.4.0 adds webhooks.\n* March 3, 2025 - pricing updated.\n"
            "## [1.2.0] - 2024-03-15\n1. 2023-01-09 (initial release)\n")
    assert kinds(text) == []
    # the same dates in running prose, or a bullet that is a live value, still count
    assert kinds("Dates: the deadline is 2024-03-15 for you.") == [("date", "2024-03-15")]
    assert kinds("- Date 2026-11-30") == [("date", "2026-11-30")]


def test_labelled_digest_with_is_and_sentence_final_pm():
    assert kinds("Our commit is a3f9c2e1b4d5f6a7 today.") == []
    assert kinds("It is 2:05 PM.") == [("time", "2:05 PM")]
    assert kinds("It is 2:05 p.m. now") == [("time", "2:05 p.m.")]


def test_epoch_milliseconds_need_no_label_but_plain_numbers_do():
    assert kinds("Request started 1764511512345 ms ago") == [("time", "1764511512345")]
    assert kinds("Order 1764511512 shipped") == []  # ten digits without a time word: not a clock reading
    assert kinds("Account 1234567890123 closed") == []  # 13 digits outside 2017–2036 in ms


def test_request_id_without_colon_needs_letters_and_digits():
    assert kinds("request id abc123def456 failed") == [("request-id", "abc123def456")]
    assert kinds("session id is 7f9e2c1a4b.") == [("request-id", "7f9e2c1a4b")]
    assert kinds("the request id 12345678 of the sample") == []
    assert kinds("Ask for the session id first.") == []


def test_empty_text():
    assert find_volatile("") == []


def test_entropy():
    assert entropy("aaaa") == 0
    assert entropy("abcd") == 2


def test_volatile_is_frozen():
    v = Volatile("uuid", 0, 1, "x", "high")
    with pytest.raises(AttributeError):
        v.start = 2  # type: ignore[misc]


def test_a_long_encoded_blob_is_not_an_id():
    import base64
    import random

    blob = base64.b64encode(random.Random(1).randbytes(3000)).decode()
    assert kinds(f"attachment {blob} end") == []
    assert kinds(f"nonce {blob[:40]} end") == [("base64-id", blob[:40])]
