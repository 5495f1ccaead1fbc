"""analyzer.detection.repeats: the same rendered date again is found again; a run of times is a log."""

from __future__ import annotations

from analyzer.detect import find_volatile


def test_the_date_repeated_further_down_is_found_each_time():
    text = (
        "Current date: 2025-04-24.\n\nPolicies.\n\nOnly answer about events before 2025-04-24 unless asked.\n"
    )
    found = [(v.kind, v.value, v.reason) for v in find_volatile(text) if v.kind == "date"]
    assert [f[:2] for f in found] == [("date", "2025-04-24"), ("date", "2025-04-24")]
    assert found[1][2] == "the same value as on line 1"


def test_a_date_that_only_looks_like_another_is_not_a_repeat():
    found = find_volatile("Current date: 2025-04-24.\nCall 2025-04-240 for help.")
    assert [v.value for v in found if v.kind == "date"] == ["2025-04-24"]


def test_a_chat_log_of_timestamps_is_content_not_the_clock():
    log = "\n".join(f"[2025-11-10 09:{m:02d}] Tanaka: message {m}" for m in range(15, 20))
    assert find_volatile(f"Summarise this log:\n{log}\n") == []
