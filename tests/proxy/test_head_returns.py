"""proxy.head_returns: a head's writes and slow returns over time, bounded."""

from __future__ import annotations

import pytest

from analyzer.rewrite import HeadReturns
from proxy.head_returns import HeadReturnsTracker


def test_writes_and_slow_returns_by_the_gap():
    now = [1000.0]
    tracker = HeadReturnsTracker(clock=lambda: now[0])
    assert tracker.observe("h") == HeadReturns(writes=1, slow_returns=0)
    now[0] += 60  # within 5 minutes: a read either way
    assert tracker.observe("h") == HeadReturns(1, 0)
    now[0] += 900  # 15 minutes: a 5m cache expired, a 1h one not
    assert tracker.observe("h") == HeadReturns(1, 1)
    now[0] += 4000  # over an hour: a new write
    assert tracker.observe("h") == HeadReturns(2, 1)
    assert tracker.observe("other") == HeadReturns(1, 0)


def test_bounded_least_recently_seen_first():
    tracker = HeadReturnsTracker(max_entries=2)
    for key in ("a", "b", "a", "c"):
        tracker.observe(key)
    assert len(tracker) == 2 and tracker.observe("b") == HeadReturns(1, 0)  # "b" was dropped, seen anew
    with pytest.raises(ValueError):
        HeadReturnsTracker(max_entries=0)


def test_gpt56_heads_follow_the_30m_and_12h_windows_apart_from_anthropic():
    from proxy.head_returns import OPENAI_56_WINDOWS

    now = [0.0]
    tracker = HeadReturnsTracker(clock=lambda: now[0])
    assert tracker.observe("h", OPENAI_56_WINDOWS) == HeadReturns(1, 0)
    now[0] += 900  # 15 minutes: within 30 minutes, a read either way
    assert tracker.observe("h", OPENAI_56_WINDOWS) == HeadReturns(1, 0)
    now[0] += 2 * 3600  # 2 hours: a 30m cache expired, a 12h one not
    assert tracker.observe("h", OPENAI_56_WINDOWS) == HeadReturns(1, 1)
    now[0] += 13 * 3600  # over 12 hours: a new write
    assert tracker.observe("h", OPENAI_56_WINDOWS) == HeadReturns(2, 1)
    assert tracker.observe("h") == HeadReturns(
        1, 0
    )  # the same key under Anthropic's windows is its own entry
    assert len(tracker) == 2
    with pytest.raises(ValueError):
        tracker.observe("h", (3600.0, 1800.0))
