"""The person signed in, named in a sentence: found; a role, a persona, a group or an example: not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def _values(text: str) -> list[str]:
    return [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    "text, value",
    [
        ("I'm logged in to Docker Hub as Ana.", "Ana"),
        ("The user is logged in as @ana_dev.", "@ana_dev"),
        ("You're signed in as ana@example.org", "ana@example.org"),
        ("You are logged in as Maria Lopez (maria@example.org).", "Maria Lopez"),
    ],
)
def test_the_person_signed_in_is_found(text, value):
    assert value in _values(text)


@pytest.mark.parametrize(
    "text",
    [
        "You are logged in as an administrator.",
        "You are logged in as Administrator.",
        "You are talking to Sherlock Holmes, the famous detective.",
        "You are helping Python developers write code.",
        "You are logged in as Acme Corp customers see it.",
        "Example: you are logged in as John.",
    ],
)
def test_a_role_a_persona_a_group_or_an_example_is_not(text):
    assert _values(text) == []
