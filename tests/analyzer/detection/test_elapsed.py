"""analyzer.detection.elapsed: a duration after a "time since last …" label grows with every
request; a duration with no such label, or a bare "ago", is not read."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Time since last message: 3h 12m", "3h 12m"),
        ("It has been 14 minutes since the last reply: 14 minutes", "14 minutes"),
        ("- Time since the user's last visit: 2 hours and 5 minutes", "2 hours and 5 minutes"),
    ],
)
def test_a_duration_until_now_under_its_label(text, value):
    assert value in [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Take a 5-minute break.",
        "Since 2015 we ship weekly.",
        "Show relative times such as '3 hours ago'.",
        "Conversation started 5 minutes ago.",  # a bare "ago": not read
        "Example: time since last message: 3h 12m",
    ],
)
def test_other_durations_are_not(text):
    assert find_volatile(text) == []
