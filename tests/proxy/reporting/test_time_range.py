"""proxy.reporting.time_range: ``--since`` parsed, and the range's SQL condition."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from proxy.reporting.time_range import parse_since, where


def test_parse_since():
    now = 1_000_000.0
    assert parse_since("24h", now) == now - 86400
    assert parse_since("30m", now) == now - 1800
    assert parse_since("7d", now) == now - 7 * 86400
    assert parse_since("all", now) is None and parse_since(None) is None
    assert parse_since("2026-11-30T00:00:00Z") == datetime(2026, 11, 30, tzinfo=UTC).timestamp()
    assert parse_since("2026-11-30") == datetime(2026, 11, 30, tzinfo=UTC).timestamp()
    with pytest.raises(ValueError, match="24h"):
        parse_since("yesterday")


def test_where_names_only_the_ends_given():
    assert where(None, None) == ("", [])
    assert where(10.0, None) == (" WHERE ts >= ?", [10.0])
    assert where(None, 20.0) == (" WHERE ts < ?", [20.0])
    assert where(10.0, 20.0) == (" WHERE ts >= ? AND ts < ?", [10.0, 20.0])
