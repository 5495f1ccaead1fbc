"""proxy.reporting.series: the bucket size of the summary's time series."""

from __future__ import annotations

from proxy.reporting.series import NICE_STEPS, pick_step


def test_pick_step_is_the_smallest_round_size_that_fits():
    assert pick_step(1_700_000_000, 1_700_000_060, 36) == (1_700_000_000, 2, 31)
    assert pick_step(0, 86400 - 1, 24) == (0, 3600, 24)
    assert pick_step(0, 86400, 24) == (0, 7200, 13)  # the bucket holding the end counts too
    assert pick_step(5, 5, 36) == (5, 1, 1)
    start, step, count = pick_step(0, 400 * 86400, 36)
    assert step % 86400 == 0 and count <= 36 and start + count * step > 400 * 86400


def test_the_round_sizes_run_from_a_second_to_thirty_days_in_order():
    assert NICE_STEPS[0] == 1 and NICE_STEPS[-1] == 30 * 86400
    assert list(NICE_STEPS) == sorted(set(NICE_STEPS))
