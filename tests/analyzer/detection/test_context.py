"""analyzer.detection.context and .wording: labels in other languages, fences, example blocks."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.context import word_classes


def test_labels_in_other_languages_and_scripts():
    assert "now" in word_classes("现在时间：") and "now" in word_classes("Heute ist")
    assert "now" in word_classes("Nous sommes le") and "now" in word_classes("오늘은")
    assert "static" in word_classes("训练数据截止") and "static" in word_classes("Wissensstand:")
    assert "example" in word_classes("例如：")


def test_the_value_after_a_clause_follows_the_phrase():
    found = [
        (v.kind, v.value) for v in find_volatile("Always use today's date, which is 2025-04-24, in answers.")
    ]
    assert found == [("today-phrase", "today's date, which is"), ("date", "2025-04-24")]


def test_a_fence_wrapping_a_whole_quoted_prompt_is_read_but_a_code_sample_is_not():
    body = "You are Grok. " * 60
    wrapped = f"```text\n{body}\nThe current date and time is 09:58 AM on January 10, 2025.\n```\n"
    assert any(v.kind == "time" for v in find_volatile(wrapped))
    sample = 'Answer briefly.\n```json\n{"created_at": "2024-01-05T10:00:00Z"}\n```\n' + "Be kind. " * 80
    assert find_volatile(sample) == []


def test_an_example_under_its_intro_line_with_one_blank_line_between():
    text = 'EXAMPLE 1 (a salad):\n\n<artifact id="a34377c9-5fc0-4e20-a926-4abb3e3417c4">\n'
    assert find_volatile(text) == []


def test_sentence_ends_and_marks_with_the_class_first():
    from analyzer.detection.context import label

    text = "See the docs. Use e.g. this: X"
    assert label(text, text.index("X")) == "Use e.g. this: "
    assert label("Ticket No. 5 vs. 6; date: X", 26) == "date: "
    assert "example" in word_classes("note, E.G. ") and "example" not in word_classes("note: ")
    assert "now" in word_classes("created_at: ") and "example" in word_classes("ISO 8601 like")
    assert "example" in word_classes("İ e.g. ")  # a non-ASCII label goes to the regex


def test_your_name_in_a_system_prompt_is_the_assistants_not_the_users():
    assert "user" in word_classes("The user's name is") and "user" in word_classes("User's timezone:")
    assert "user" not in word_classes("Your name:") and "user" not in word_classes("Your nickname is")
    text = "You are a helper. Your nickname is {bot_nick} in the group; {user_name} is asking."
    assert [v.value for v in find_volatile(text)] == ["{user_name}"]


def test_nous_sommes_is_now_only_before_a_date():
    assert "now" in word_classes("Nous sommes le") and "now" not in word_classes("Nous sommes ouverts")
    assert [v.value for v in find_volatile("Nous sommes ouverts {{horaires_texte}}.")] == []
    assert [v.value for v in find_volatile("Nous sommes le 24 janvier 2024.")] == ["24 janvier 2024"]
