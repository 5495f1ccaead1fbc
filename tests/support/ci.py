"""What a test does when the machine lacks something it needs (Redis, Chromium, a binary):
under ``CI=true`` the test fails, elsewhere it skips."""

from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is required under CI=true")
    pytest.skip(f"{what} not available")
