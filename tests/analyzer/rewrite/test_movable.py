"""analyzer.rewrite.movable: only certain per-request values move; decisions cached exactly."""

from __future__ import annotations

import pytest

from analyzer.rewrite.movable import DecisionCache, scan
from tests.support import FIXTURES


def moved(text: str) -> list[tuple[str, str]]:
    return [(text[s.label_start : s.start].strip(), text[s.start : s.end]) for s in scan(text)]


def test_labelled_values_move_with_their_labels():
    text = (
        "Current date and time: 2026-12-01 08:15:03 UTC\nRequest id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b\n"
        "Today is Tuesday, December 1, 2026.\nSession: sess_8f7a6b5c4d3e2f1a0b9c\nThe current time is 14:32.\n"
        "ts=1764577200 trace_id=abc123def4567890abcdef\nDate: 2026-12-01\n"
    )
    assert moved(text) == [
        ("Current date and time:", "2026-12-01 08:15:03 UTC"),
        ("Request id:", "3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b"),
        ("Today is", "Tuesday, December 1, 2026"),
        ("Session:", "sess_8f7a6b5c4d3e2f1a0b9c"),
        ("The current time is", "14:32"),
        ("ts=", "1764577200"),
        ("trace_id=", "abc123def4567890abcdef"),
        ("Date:", "2026-12-01"),
    ]


def test_ids_the_detector_keeps_move_under_any_label_but_a_configuration_one():
    text = (
        "Upload batch 6d1f0a7e-3b2c-4e9d-8a5f-7c6b5a4d3e2f is being indexed.\n"
        "Pairing handle: 9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b\n"
        "Job 1773481287345 ms after the epoch; sent at 1773481290.\n"
    )
    assert moved(text) == [
        ("Upload batch", "6d1f0a7e-3b2c-4e9d-8a5f-7c6b5a4d3e2f"),
        ("Pairing handle:", "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"),
        ("Job", "1773481287345"),
        ("sent at", "1773481290"),
    ]


def test_under_a_label_no_list_names_only_a_minted_value_moves():
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    text = (
        "Keyboard: 4f3a9c1e8d2b7a6f5e4d3c2b1a0f9e8d\n"
        "Pairing code: 9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b\n"
        f"Badge: {jwt}\n"
        "Customer ref: 7c2e9a41d3b85f06e1a4c7d9b2f35e80\n"
    )
    assert moved(text) == [
        ("Pairing code:", "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"),
        ("Badge:", jwt),
        ("Customer ref:", "7c2e9a41d3b85f06e1a4c7d9b2f35e80"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Keyboard: 4f3a9c1e8d2b7a6f5e4d3c2b1a0f9e8d",
        "Printer serial 7c2e9a41d3b85f06e1a4c7d9b2f35e80",
        "Default tenant: 6d1f0a7e-3b2c-4e9d-8a5f-7c6b5a4d3e2f",
        "TEST_USER_ID = 9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b",
        "Search the collection 2c4e6a8b-1d3f-4a5c-9e7b-0f2d4b6a8c1e first.",
        "- 6d1f0a7e-3b2c-4e9d-8a5f-7c6b5a4d3e2f\n- 9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b",
        "Customer hotline 1773481287345",
        "Voice ID: 4f1c9e2a-7b3d-4c8e-9a1f-2d3e4c5b6a7f",
        "Workflow ID: 8a2b4c6d-1e3f-4a5b-8c7d-9e0f1a2b3c4d",
        "Guild ID: 0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    ],
)
def test_ids_labelled_as_configuration_or_without_a_label_stay(text):
    assert moved(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "We open at 09:00 and close at 17:00.",
        "Office hours are 09:00-17:00 Monday to Friday.",
        "Give times like 7:45 PM, e.g. 14:30.",
        "All times are UTC+05:30.",
        "Knowledge cutoff: 2024-06-01.",
        "Last updated: 2025-03-02.",
        "Founded March 3, 2019.",
        "anthropic-version: 2023-06-01",
        "## [1.2.0] - 2024-03-15",
        "Use version 2.3.1 of the API; it costs $4.99.",
        "Use an id such as 550e8400-e29b-41d4-a716-446655440000 in tests.",
        "For example: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
        "Use the knowledge base kb-Xy12Ab34Cd56Ef78. Our merchant id is mch_K8sL2pQ9xR4vT7wZ.",  # configuration, not per request
        "CLUSTER=pg-Cl8Xq2LmR4tK",
        "Call center number 1800123456789",
    ],
)
def test_precision_cases_never_move(text):
    assert moved(text) == []


def test_the_lint_negatives_never_move():
    assert moved((FIXTURES / "detect" / "negatives.md").read_text()) == []


def test_the_cache_reuses_decisions_only_when_nothing_else_changed():
    cache = DecisionCache()
    base = "Current time: 2026-12-01 08:15:03 UTC\nCall 555-0100.\n" + "Stable policy text. " * 200
    first = cache.movable(base)
    ticked = base.replace("08:15:03", "08:15:10")  # the clock moved: same head otherwise
    assert cache.movable(ticked) == first and (cache.hits, cache.misses) == (1, 1)
    other_number = base.replace("555-0100", "555-0199")  # the same shape, but a change outside the value
    assert cache.movable(other_number) == scan(other_number) and (cache.hits, cache.misses) == (1, 2)
    edited = base.replace("policy", "pol1cy", 1)
    assert cache.movable(edited) == scan(edited) and cache.misses == 3


def test_cache_is_bounded():
    cache = DecisionCache(max_entries=3)
    for i in range(10):
        cache.movable(f"Prompt number {'x' * i}: Current time: 08:15")
    assert len(cache._entries) == 3


def test_a_cached_decision_never_outlives_its_value():
    """The same shape with a value that is no longer volatile gets a fresh answer."""
    cache = DecisionCache()
    for earlier, later in [
        (
            "Request id: 3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
            "Request id: 00000000-0000-0000-0000-000000000000",
        ),
        ("Current time: 12:30", "Current time: 29:59"),
        ("Session: 8f7a6b5c4d3e2f1a0b9c", "Session: 0000000000000000"),
        ("Request id: req_8f7a6b5c4d3e2f1a", "Request id: abcdefghijklmnopqrst"),
    ]:
        cache.movable(earlier)
        assert cache.movable(later) == scan(later), later


def test_ulids_and_jwts_keep_the_cache_warm():
    cache = DecisionCache()
    tail = "\nYou are Atlas. " * 500
    cache.movable("Request id: 01HZX3Q8RN5T2VKPJ4C7W9BDEF" + tail)
    spans = cache.movable("Request id: 01HZX4K2MB7Q9ZRT3XWN8PC5GH" + tail)
    assert cache.hits == 1 and spans == scan("Request id: 01HZX4K2MB7Q9ZRT3XWN8PC5GH" + tail)


def test_values_read_by_their_heading_keep_the_cache_warm():
    """A user block's lines mean something only under their heading: the second look reads it."""
    cache = DecisionCache()
    base = "You are Atlas.\n\n## About the user\n\n- Name: {}\n- City: {}\n\n" + "Be kind. " * 300
    first, second = base.format("Alice Smith", "Lyon"), base.format("Bruno Diazz", "Oslo")
    assert scan(first) and cache.movable(first) == scan(first)
    assert cache.movable(second) == scan(second) and (cache.hits, cache.misses) == (1, 1)
    unheaded = second.replace("## About the user", "## About the shop")  # a change outside the values
    assert cache.movable(unheaded) == scan(unheaded) and cache.misses == 2


def test_a_decision_resting_on_a_copy_or_an_equality_is_not_reused():
    """A value kept as a repeat of text outside the cached values, or of another value that no
    longer equals it, is read afresh."""
    cache = DecisionCache()
    cache.movable("2026-12-10\n```\nToday is 2026-12-10.")
    changed = "2026-12-10\n```\nToday is 2026-12-25."
    assert cache.movable(changed) == scan(changed) and cache.hits == 0
    cache.movable("Current time: 2025-04-17 08:17\n```\n2025-04-17 08:17")
    split = "Current time: 2025-04-17 08:17\n```\n2025-04-17 01:32"
    assert cache.movable(split) == scan(split) and cache.hits == 0


def test_a_value_that_now_recurs_elsewhere_gets_a_fresh_answer():
    """The same shape, but today's value now also stands on a line the cache never rescans."""
    cache = DecisionCache()
    cache.movable("Today is 2026-12-09.\nOffice closed on 2026-12-25 for Christmas.\n")
    christmas = "Today is 2026-12-25.\nOffice closed on 2026-12-25 for Christmas.\n"
    assert cache.movable(christmas) == scan(christmas) and cache.misses == 2


LINES = [
    "You are Atlas.",
    "Office closed on {d}.",
    "```",
    "{d}",
    "## About the user",
    "- Name: {d}",
    "Office hours are 09:00-17:00.",
    "Call 555-0100.",
    "Current time: {t}",
    "Request id: {u}",
    "Session: {h}",
    "Today is {d}.",
    "Version {v} of the API.",
    "Example: {u}",
]


def _fill(rng_values, template: str) -> str:
    t, u, h, d, v = rng_values
    return template.format(t=t, u=u, h=h, d=d, v=v)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_values = st.tuples(
    st.sampled_from(["08:15", "29:59", "12:30:45", "9:05", "2026-12-01 08:15:03 UTC"]),
    st.sampled_from(
        [
            "3f2b9c1e-8d4a-4b6f-9e2a-1c3d5e7f9a0b",
            "00000000-0000-0000-0000-000000000000",
            "01HZX3Q8RN5T2VKPJ4C7W9BDEF",
        ]
    ),
    st.sampled_from(["8f7a6b5c4d3e2f1a0b9c", "0000000000000000", "abcdefabcdefabcdef12", "deadbeef"]),
    st.sampled_from(["December 1, 2026", "Tuesday", "2026-12-01"]),
    st.sampled_from(["2.3.1", "10.4", "1"]),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(LINES), min_size=1, max_size=5), _values), min_size=2, max_size=8
    )
)
def test_the_cache_always_answers_what_a_fresh_scan_answers(texts):
    cache = DecisionCache(max_entries=8)
    for lines, values in texts:
        text = "\n".join(_fill(values, line) for line in lines)
        assert cache.movable(text) == scan(text)


def test_rendered_values_under_their_labels_move_and_decoys_stay():
    text = (
        "- step: 3 of at most 25\nDialogue turn: 17\n**User:** Ana\nemail użytkownika: ana@example.com\n"
        "my current timezone: Europe/Warsaw\n- Last login: Wednesday, April 23, 2025\n"
        "Name: Acme Assistant\nVersion: 4.2\nLocation: see the docs\nServer timezone: Europe/Rome\n"
    )
    assert moved(text) == [
        ("- step:", "3"),
        ("Dialogue turn:", "17"),
        ("**User:**", "Ana"),
        ("email użytkownika:", "ana@example.com"),
        ("my current timezone:", "Europe/Warsaw"),
        ("- Last login:", "Wednesday, April 23, 2025"),
    ]


def test_a_value_alone_on_its_line_is_labelled_by_the_heading_a_blank_line_above():
    text = "You are Rex.\n\n## Today's date:\n\n  Thursday, April 24, 2025\n\n## Notes\n\nBe brief.\n"
    (span,) = scan(text)
    assert text[span.start : span.end] == "Thursday, April 24, 2025"
    assert text[span.label_start : span.start].strip().startswith("## Today's date:")
    # a heading three blank lines up labels nothing: the date moves alone, its line its own label
    far = "You are Rex.\n\n## Today's date:\n\n\n\n  Thursday, April 24, 2025\n"
    (alone,) = scan(far)
    assert "#" not in far[alone.label_start : alone.start]


def test_a_whole_date_alone_on_its_line_moves_and_a_bare_clock_or_an_example_does_not():
    for value in ("Thursday, April 24, 2025", "2025-04-24"):
        text = f"You are Rex.\n\n{value}\n\nBe brief.\n"
        assert [text[s.start : s.end] for s in scan(text)] == [value], value
    assert scan("Example:\n\nThursday, April 24, 2025\n") == ()
    assert scan("You are Rex.\n\n14:05\n\nBe brief.\n") == ()


def test_a_prefixed_session_id_under_an_id_key_moves():
    text = "You are Rex.\n\n- id: sess_8f3a9c1d2e7b6a00\n- Player Name: Ana\n\nBe brief.\n"
    assert [text[s.start : s.end] for s in scan(text)] == ["sess_8f3a9c1d2e7b6a00", "Ana"]
