"""analyzer.sizes: one parser for every size flag (serve's body and head limits, kv's memory and bandwidth)."""

from __future__ import annotations

import pytest

from analyzer.sizes import GIB, KIB, MIB, parse_bytes


@pytest.mark.parametrize(
    "text, size",
    [
        ("1024", 1024),
        ("80GB", 80e9),
        ("80 GiB", 80 * GIB),
        ("512KiB", 512 * KIB),
        ("512 ki", 512 * KIB),
        ("20k", 20_000),
        ("1.5MiB", 1.5 * MIB),
        (".5MB", 500_000),
        ("1,024", 1024),
        ("1_000b", 1000),
        ("2TB", 2e12),
        ("1tib", 1024**4),
        ("1e9", 1e9),
    ],
)
def test_spellings(text, size):
    assert parse_bytes(text) == size


def test_per_second_drops_the_rate_suffix():
    assert parse_bytes("3.35TB/s", per_second=True) == pytest.approx(3.35e12)
    assert parse_bytes("100GBps", per_second=True) == 100e9
    with pytest.raises(ValueError):
        parse_bytes("3.35TB/s")


@pytest.mark.parametrize("text", ["", "MiB", "-5", "12 parsecs", "1PB", "1.2.3"])
def test_rejects(text):
    with pytest.raises(ValueError, match="not a size"):
        parse_bytes(text)


def test_exponents_can_be_refused_and_the_hint_ends_the_message():
    with pytest.raises(ValueError) as info:
        parse_bytes("1e6", exponent=False, hint="use e.g. 32MiB")
    assert str(info.value) == "not a size: '1e6' (use e.g. 32MiB)"
