"""Volatile-content detectors: recall on each kind, exact spans, precision by context, and
the reason given for each value. (The labelled corpus is scored in tests/analyzer/lint/test_corpus.py.)"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.detect import KIND_LABELS, Volatile, entropy, find_volatile
from tests.support import FIXTURES as ALL_FIXTURES

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
        ("Date: 2026-11-30.", "date", "2026-11-30"),
        ("Current date: Monday, November 30, 2026 we", "date", "Monday, November 30, 2026"),
        ("Today: 30 Nov 2026", "date", "30 Nov 2026"),
        ("Date 11/30/2026", "date", "11/30/2026"),
        ("Datum (date): 30.11.2026", "date", "30.11.2026"),
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
        (
            "auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0",
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0",
        ),
        ("nonce 9f86d081884c7d659a2feaa0c55ad015 ok", "hex-id", "9f86d081884c7d659a2feaa0c55ad015"),
        ("key Zx81kLq0PmA7vN3cR5tY2wB9 ok", "base64-id", "Zx81kLq0PmA7vN3cR5tY2wB9"),
        (
            "blob dGhpcyBpcyBhIHJhbmRvbSBzZXNzaW9uIDQyMTc= ok",
            "base64-id",
            "dGhpcyBpcyBhIHJhbmRvbSBzZXNzaW9uIDQyMTc=",
        ),
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
    by_value = {v.value: v.severity for v in find_volatile("Time: 12:01 on 2026-11-30 {date} {now}")}
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
    text = (
        "Acme API version 2023-06-01; header anthropic-version: 2023-06-01; api-version=2024-02-15-preview.\n"
        "## Changelog\n- 2024-03-15: v2.4.0 adds webhooks.\n* March 3, 2025 - pricing updated.\n"
        "## [1.2.0] - 2024-03-15\n1. 2023-01-09 (initial release)\n"
    )
    assert kinds(text) == []
    # a date labelled as today, or standing alone as a field, still counts; one in prose does not
    assert kinds("- Date 2026-11-30") == [("date", "2026-11-30")]
    assert kinds("As of today, 2024-03-15.") == [("today-phrase", "As of today,"), ("date", "2024-03-15")]
    assert kinds("Dates: the deadline is 2024-03-15 for you.") == []


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


# --- context decides: the false-finding classes and their look-alikes that still count ---


@pytest.mark.parametrize(
    "text",
    [
        "Give the start time in HH:MM, e.g. 14:30.",
        "Confirm times like 7:45 PM back to the user.",
        "Times such as 09:05 are fine; for example 23:59 is the last slot.",
        "All times are UTC+05:30; India is +05:30 and Newfoundland -03:30.",
        "Knowledge cutoff: 2024-06-01.",
        "Model card last updated: March 3, 2025.",
        "Acme was founded on 12 May 2009 and incorporated on 2011-03-14.",
        "Apollo 11 landed on July 20, 1969.",
        "The API version is 2024-02-15.",
        "Messages sent before 2020-01-01 are archived.",
        "Use an id such as 550e8400-e29b-41d4-a716-446655440000 in tests.",
        "For example: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
        "Battery service 0000180F-0000-1000-8000-00805F9B34FB.",
        "LED:{uuid:'19b10001-e8f2-537e-4f6c-d104768a1214', type: boolean}",
        "service 6e400001-b5a3-f393-e0a9-e50e24dcca9e, RX 6e400002-b5a3-f393-e0a9-e50e24dcca9e",
        "led 44D02C61-3543-4A30-8E94-ACA5853D55C1 and mode 44D02C63-3543-4A30-8E94-ACA5853D55C1",
        'Example output:\n{"start": "2024-03-01T12:00:00Z", "id": "5f0c2a9e-3b1d-4e7a-9c8f-1a2b3c4d5e6f"}',
        "Event ids look like evt_1a2b3c4d5e6f7a8b9c0d.",
        "The store opens at 10:00 and closes at 19:00.",
        "Flight SL 412 leaves at 07:15 and lands at 10:40.",
        "Checksum of quill-4.2.0.tar.gz: 5d41402abc4b2a76b9719d911017c592",
        "Project id: prj_Hx82KdLq0ZpW (stable for the lifetime of the project).",
        "Use placeholders like {date} in your own templates.",
    ],
)
def test_example_fixed_and_historical_values_are_not_findings(text):
    assert kinds(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Current Date: {{CURRENT_DATE}}", "{{CURRENT_DATE}}"),
        ("Session: {{ user_session }}", "{{ user_session }}"),
        ("Requests left: {{ REMAINING_QUOTA }}", "{{ REMAINING_QUOTA }}"),
        ("Last login: {{ last_login_date_str }}", "{{ last_login_date_str }}"),
        ("This is turn {turn_count} of the chat.", "{turn_count}"),
        ("Dialogue turn: {{#sys.dialogue_count#}}", "{{#sys.dialogue_count#}}"),
        ('Local time now: <%= Time.now.strftime("%H:%M") %>.', '<%= Time.now.strftime("%H:%M") %>'),
        ("Generated at {{ now() }} for you.", "{{ now() }}"),
        ("Current date: ${EXPR}. Goal: ${goal}", "${EXPR}"),
        ("Session context: ${ctx}", "${ctx}"),
        ("Customer cus_N8s7Hq2LkP0xRt asked twice.", "cus_N8s7Hq2LkP0xRt"),
        ("The user's local time is Sun Nov 30 2026 14:05:12 GMT+0100.", "Sun Nov 30 2026"),
        ("Request started 1764511512345 ms since the epoch; expires at 1764515112.", "1764515112"),
    ],
)
def test_volatile_by_name_call_or_label(text, value):
    assert value in [v.value for v in find_volatile(text)]


def test_each_value_says_why_it_was_judged_volatile():
    text = (
        "Current time: 14:05 UTC\nSession: {{ user_session }}\nHandle 018f3c1e-8d4a-7e6f-9b2a-1c3d5e7f9a0b\n"
        "nonce 9f86d081884c7d659a2feaa0c55ad015\n2026-11-30\nNow: ${new Date().toISOString()}\n"
    )
    why = {v.value: v.reason for v in find_volatile(text)}
    assert why["14:05 UTC"] == "follows `Current time`"
    assert why["{{ user_session }}"] == "named `user_session`: per-request or per-session state"
    assert why["018f3c1e-8d4a-7e6f-9b2a-1c3d5e7f9a0b"] == "a time-based UUID"
    assert why["9f86d081884c7d659a2feaa0c55ad015"] == "32 random-looking hex digits"
    assert why["2026-11-30"] == "a date alone on its line"
    assert why["${new Date().toISOString()}"] == "calls `new Date()`"
    assert all(v.reason for v in find_volatile(text) if v.kind != "today-phrase")


def test_a_label_on_the_line_above_does_not_leak_into_prose():
    assert kinds("Knowledge cutoff: 2024-06-01\nDate: 2026-11-30") == [("date", "2026-11-30")]
    assert kinds("Knowledge cutoff: 2024-06-01. Date: 2026-11-30.") == [("date", "2026-11-30")]


def test_description_context_needs_a_now_label():
    text = "Start of the slot, for the clinic's 09:15 opening; timestamps like 2026-01-05T10:00:00Z."
    assert find_volatile(text, context="description") == []
    assert [v.value for v in find_volatile("Today is 2026-11-30.", context="description")] == [
        "Today is",
        "2026-11-30",
    ]


def test_a_request_label_beats_a_hand_made_uuid_shape():
    assert kinds("session_id: a1b2c3d4-e5f6-7890-abcd-ef1234567890") == [
        ("uuid", "a1b2c3d4-e5f6-7890-abcd-ef1234567890")
    ]
    assert (
        kinds("see a1b2c3d4-e5f6-7890-abcd-ef1234567890") == []
    )  # counting digits, no label: a made-up constant


def test_the_scan_finds_values_past_long_runs_of_plain_prose():
    prose = "You answer billing questions politely and briefly. " * 400
    text = prose + "Request id: 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a0b\n" + prose + "Current time: 14:05:09 UTC"
    assert [v.kind for v in find_volatile(text)] == ["uuid", "today-phrase", "time"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *"0123456789abcdefABCDEF:-/.,{}$%<>() _=TZ\n`",
                "eyJ",
                "Nov",
                "Today is ",
                "Current time: ",
                "{{ now }}",
                "e.g. ",
                "2026-11-30",
                "session_id: ",
            ]
        ),
        max_size=60,
    ).map("".join)
)
def test_any_text_gives_ordered_disjoint_values_with_exact_spans(text):
    found = find_volatile(text)
    assert all(text[v.start : v.end] == v.value and v.start < v.end for v in found)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))
    assert all(v.kind in KIND_LABELS and (v.reason or v.kind == "today-phrase") for v in found)
