"""analyzer.detection.prefilters: each fast path agrees with the regex or the pass it stands in for."""

from __future__ import annotations

import random
import re

from analyzer.detection import label_keys, prefilters, session

WINDOWS = (
    "Remaining tokens: `151787`",
    "Tokens used for this session: 48213",
    "You have **12 turns remaining**.",
    "you've used 41 of your 100 requests",
    "currently on iteration 3",
    "Attempt 2/5",
    "Battery level: 81%",
    "Free RAM: 3 GB",
    "Context window usage: 41%",
    "with 5 calls left",
    "quota context 15 detail 42",
    "a price of 48 in context",
    "to\u212aens left: 5",
    "ſteps left: 3",
    "İteration 2 of 4",
    "Remaining budget: $4.20 of $10.00",
    "Total cost so far this session: $0.0213",
    "CPU usage: 42%",
    "Current load: 0.73",
    "load average 0.4",
    "Current balance: 12",
)


def test_reading_words_leave_out_no_window_the_reading_regex_matches():
    for text in WINDOWS:
        found = session._READING.search(text) is not None
        assert prefilters.ascii_words(text, 0, len(text), session._READING_WORDS) is not False or not found, (
            text
        )
    assert prefilters.ascii_words("a price of 48 in context", 0, 24, session._READING_WORDS) is False
    assert prefilters.ascii_words("to\u212aens left: 5", 0, 15, session._READING_WORDS) is None


def test_keyed_answers_ascii_windows_as_its_regexes_do():
    for text in ("Tokens used: 48", "FREE 3", "Avail: 5", "a price of 48", "storage <", "plain 12"):
        for rx, words in (
            (session._BEFORE_KEYS, session._BEFORE_WORDS),
            (session._AFTER_KEYS, session._AFTER_WORDS),
        ):
            assert session._keyed(text, 0, len(text), rx, words) == bool(rx.search(text)), text


def test_find_led_finds_what_str_find_does():
    texts = (
        "",
        "J",
        "eyJ",
        "xeyJabc",
        "J J J eJ yJ JeyJ",
        "J" * 20 + "eyJ",
        "__ _ ___",
        "{ {{ % {%}",
        "ab" * 30,
    )
    for text in texts:
        for needle, lead in (("eyJ", 2), ("___", 0), ("{%", 0), ("{%", 1), ("ab", 1)):
            for tries in (0, 1, 2, 8):
                assert prefilters.find_led(text, needle, lead, tries) == text.find(needle), (
                    text,
                    needle,
                    lead,
                    tries,
                )


def test_label_keys_search_finds_what_the_lookbehind_regex_does():
    plain = re.compile(
        rf"(?<![a-zà-ÿ])(?:(?P<owner>{label_keys.OWNER})|(?P<counter>(?:{label_keys.COUNTER})(?![a-z]))"
        rf"|(?P<weather>{label_keys.WEATHER})|(?P<here>you are in|you're in))"
    )
    words = (
        "user users username visitor steps step stepsx turno tour tura turns krok klienta użytkownika".split()
    )
    words += "weather wetter météo you are in you're in 用户 ユーザー шаг 턴 rounds x é 9 _ - :".split()
    rnd = random.Random(7)
    for _ in range(3000):
        text = "".join(rnd.choice(words) + rnd.choice(("", " ", "_", "a", "\n", "é", "3")) for _ in range(6))
        lo = rnd.randrange(len(text) + 1)
        hi = rnd.randrange(lo, len(text) + 1)
        a, b = plain.search(text, lo, hi), label_keys.search(text, lo, hi)
        assert (a is None) == (b is None), (text, lo, hi)
        if a:
            assert (a.start(), a.end(), a.lastgroup) == (b.start(b.lastindex), b.end(), b.lastgroup), (
                text,
                lo,
            )


def test_led_by_first_groups_alternatives_by_their_first_character():
    assert (
        prefilters.led_by_first("user|users|visitor|u[żz]y(?:a|u)?") == "u(?:ser|sers|[żz]y(?:a|u)?)|visitor"
    )
