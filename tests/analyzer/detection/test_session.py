"""analyzer.detection.session: counts, memory, state JSON and environment/git blocks, found and not."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile


def state(text: str) -> list[str]:
    return [v.value for v in find_volatile(text) if v.kind == "state"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Tokens used: 48,213 / 200,000", "48,213"),
        ("18,412 / 200K tokens used (9%)", "18,412"),
        ("<budget:token_budget>1000000</budget:token_budget>", "1000000"),
        ("Free memory: 3.2 GB", "3.2 GB"),
        ('Current state: {"step": 3, "cart": [1, 2]}', '{"step": 3, "cart": [1, 2]}'),
        ("Current coordinates: 41.0082, 28.9784", "41.0082"),
        ("Tokens used for this session: 48213", "48213"),
        ("Remaining tokens: `151787`", "151787"),
        ("You have **12 turns remaining**.", "12"),
        ("Remaining budget: $4.20 of $10.00", "4.20"),
        ("Total cost so far this session: $0.0213", "0.0213"),
        ("CPU usage: 42%", "42%"),
        ("Current load: 0.73", "0.73"),
    ],
)
def test_a_reading_under_a_weak_label_is_session_state(text, value):
    assert value in state(text)


@pytest.mark.parametrize(
    "text",
    [
        "Stay under 200,000 tokens per task.",
        "The Pro plan costs $1,299.00 per year; Python 3.11.4 is supported.",
        'A status line such as "Tokens used: 1,234 / 200,000" is shown to the user.',
        "Servers have 16GB memory and 4 vCPU.",
        'The schema is {"type": "object"}.',
        "Limit the tokens for this session to 48213 at most.",
        "You have **12 turns** to practise before the exam.",
        "Costs are billed at $1.37 per 1K tokens; the budget is $10.00 per project.",
        "Keep CPU usage under 80% and the load average below 4.",
    ],
)
def test_limits_prices_examples_and_schemas_are_not_state(text):
    assert state(text) == []


ENV = "You are an agent.\n\n<env>\nWorking directory: /home/ana/shop\nPlatform: linux\nToday's date: 2026-11-30\n</env>\n\nBe brief.\n"
GIT = (
    "gitStatus: This is the git status at the start of the conversation.\nCurrent branch: feature/cart\n\n"
    "Status:\nM src/cart.py\n?? notes.txt\n\nRecent commits:\na1b2c3d Fix the cart total\ne4f5a6b Add tests\n\n"
    "Follow the style guide.\n"
)


def test_an_environment_block_is_one_finding_from_its_tag_to_its_end():
    values = state(ENV)
    assert values == [ENV[ENV.index("<env>") : ENV.index("</env>") + 6]]


def test_a_git_status_snapshot_is_one_block_with_its_parts():
    (block,) = state(GIT)
    assert block.startswith("gitStatus:") and "e4f5a6b Add tests" in block and "style guide" not in block


def test_a_section_about_the_environment_without_values_is_not_a_block():
    text = (
        "## Environment\nYou run in a sandbox with network access disabled, so install what you need before "
        "you start.\nThe tests run with make test.\n"
    )
    assert state(text) == []


def test_reading_keys_are_the_spans_one_regex_pass_gives():
    import re

    from analyzer.detection.session import _READING_KEYS, _reading_keys

    rx = re.compile("|".join(_READING_KEYS))
    for low in (
        "",
        "tokens used: 5",
        "attemptoken quota",
        "credit-quotattempt",
        "no key here",
        "tokentoken",
        "cost so far: $1; cpu load average",
        "current loadcostspending",
    ):
        assert _reading_keys(low) == [m.span() for m in rx.finditer(low)]


def test_keyed_agrees_with_its_regex_on_ascii_and_other_windows():
    from analyzer.detection.session import _BEFORE_KEYS, _BEFORE_WORDS, _keyed

    for text in ("Tokens used: 48", "Free MEMORY 3", "a price of 48", "to\u212a 5", "ſwap 3", "İ 12 coord"):
        got = _keyed(text, 0, len(text), _BEFORE_KEYS, _BEFORE_WORDS)
        assert got == bool(_BEFORE_KEYS.search(text)), text
    assert _keyed(
        "to\u212a", 0, 4, _BEFORE_KEYS, _BEFORE_WORDS
    )  # Kelvin sign: k to the regex, not to str.lower
    assert not _keyed("a price of 48", 0, 13, _BEFORE_KEYS, _BEFORE_WORDS)


def test_label_before_agrees_with_its_regex_on_ascii_and_other_windows():
    from analyzer.detection.session import READING_BEFORE, label_before

    for text in (
        "Tokens used: ",
        "free memory: ",
        "when pinning <a> >= ",
        "<budget:token_budget>",
        "<x:usage> ",
        "<remaining> ",
        "a price of ",
        "Context window usage: ",
        "latitude ",
        "ſwap used ",
        "İ gps ",
    ):
        assert label_before(text, 0, len(text)) == bool(READING_BEFORE.search(text, 0, len(text))), text


def test_readings_with_a_space_noun_or_a_verb_before_the_value():
    assert [v.value for v in find_volatile("Free disk space: 12.4 GB")] == ["12.4 GB"]
    assert [v.value for v in find_volatile("Your remaining budget is $3.17.")] == ["3.17"]
    assert find_volatile("The disk space is 12.4 GB per seat.") == []


def test_label_before_agrees_with_its_regex_on_random_windows():
    """Random windows of the label words, their neighbours and filler: the skip is exact."""
    import random

    from analyzer.detection.reading_labels import READING_BEFORE, label_before

    rng = random.Random(7)
    pieces = (
        "tokens token used left remaining usage consumed spent so far context window free available avail "
        "memory mem ram vram disk storage space swap credits quota requests budget total cost spend spending "
        "charges to date current account balance cpu gpu load average utilization coordinates latitude lat "
        "lon lng gps is are was for this session the of <x_usage> <remaining> <a> > template history : = ( "
        "12 , . \n"
    ).split(" ")
    for _ in range(20000):
        text = "".join(rng.choice((" ", "", "  ", ": ")).join(rng.sample(pieces, rng.randint(1, 5))))
        text = text.title() if rng.random() < 0.2 else text
        assert label_before(text, 0, len(text)) == bool(READING_BEFORE.search(text)), text


def test_reading_keys_with_a_digit_near_are_those_a_search_per_key_finds():
    """The digit looked for once per stretch of keys is the one a search in each key's window finds."""
    import random

    from analyzer.detection.session import _DIGIT, _reading_keys

    rng = random.Random(11)
    pieces = ("token", "quota", "context", "step", "ve used", "attemptoken", " ", "x" * 20, "7", "٣", "\n")
    pieces += ("quotattemptoken", "creditoken", "x" * 9, "é", "?")
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        low = text.lower()
        want = [(a, b) for a, b in _reading_keys(low) if _DIGIT.search(text, max(0, a - 16), a + 32)]
        assert _reading_keys(low, text) == want, text


def test_no_chain_of_overlapping_reading_keys_reaches_past_the_searched_margin():
    """A key that starts inside another (quota → attempt → token) can decide whether a later one is
    kept: every such chain starts within ``KEY_CHAIN_REACH`` of its last key (and none loops)."""
    from analyzer.detection.session import _READING_KEYS, KEY_CHAIN_REACH

    def reach(key: str, depth: int = 0) -> int:
        assert depth < len(_READING_KEYS), "a loop of overlapping keys"
        return max(
            [0]
            + [
                d + reach(after, depth + 1)
                for after in _READING_KEYS
                for d in range(1, len(key))
                if after.startswith(key[d:])
            ]
        )

    assert max(reach(k) for k in _READING_KEYS) < KEY_CHAIN_REACH
