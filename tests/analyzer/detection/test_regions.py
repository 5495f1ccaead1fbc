"""analyzer.detection.regions: code fences (their lengths) and example blocks, found and not found."""

from __future__ import annotations

from analyzer.detect import find_volatile
from analyzer.detection.regions import CodeSpans, in_example_block


def test_a_shorter_fence_inside_a_longer_one_is_its_content():
    inner = "```txt\nYou are ChatGPT.\nCurrent date: 2023-11-26\n```\n"
    text = "## A captured prompt\n\n````markdown\n" + inner + "More text.\n" * 60 + "````\n"
    assert text.index("2023-11-26") not in CodeSpans(text)
    assert [v.value for v in find_volatile(text) if v.kind == "date"] == ["2023-11-26"]
    tildes = "Sample:\n~~~python\nx = 1\n```\nstill code: 2024-01-05 10:00\n~~~\nafter\n"
    assert tildes.index("2024-01-05") in CodeSpans(tildes)


def test_a_fence_of_the_same_length_still_opens_and_closes():
    text = "Intro line.\n```python\nstamp = '2024-01-05 10:00'\n```\nCurrent date: 2024-01-05\n"
    spans = CodeSpans(text)
    assert text.index("'2024") in spans and text.rindex("2024-01-05") not in spans


def test_an_example_under_its_intro_and_one_blank_line():
    text = "Example:\n\nMemory: I went to the vet.\nQuestion: When?\nCorrect Answer: March 15, 2023\n"
    assert in_example_block(text, text.index("March"))
    assert find_volatile(text) == []
    two_blanks = "Example:\n\n\nCurrent date: March 15, 2023\n"
    assert not in_example_block(two_blanks, two_blanks.index("March"))


def test_code_samples_inside_a_wrapping_fence_stay_code():
    body = "```python\nstamp = '2024-01-05 10:00:00'\n```\n" + "Prose line.\n" * 60
    text = "````markdown\nYou are a helper.\n" + body + "````\n"
    assert text.index("'2024") in CodeSpans(text)
    assert [v for v in find_volatile(text) if v.kind in ("date", "time")] == []


def test_a_fence_quoting_a_system_prompt_is_prose_but_its_code_stays_code():
    quoted = "Here is what it said:\n\n```\nYou are ChatGPT. Knowledge cutoff: 2023-12. Current date: 2024-07-07.\n```\n"
    assert quoted.index("2024-07-07") not in CodeSpans(quoted)
    assert [v.value for v in find_volatile(quoted) if v.kind == "date"] == ["2024-07-07"]
    nested = "Intro.\n\n````\nYou are a helper.\n```python\nstamp = '2024-01-05 10:00'\n```\n````\n"
    assert nested.index("'2024") in CodeSpans(nested)
    code = "Intro.\n\n```\nconfig = load()\nCurrent date: 2024-07-07\n```\n"
    assert code.index("2024-07-07") in CodeSpans(code)
    python = "Intro.\n\n```python\nYou are = 1  # Current date: 2024-07-07\n```\n"
    assert python.index("2024-07-07") in CodeSpans(python)


def test_lines_under_a_format_intro_are_an_example():
    text = "Reply in this exact plain-text format:\n\n  Task: Call mom\n  Time: 14:00\n"
    assert in_example_block(text, text.index("14:00"))
    assert find_volatile(text) == []
    live = "Keep to the plain-text format.\n\nCurrent time: 14:00\n"
    assert not in_example_block(live, live.index("14:00"))
    assert [v.value for v in find_volatile(live) if v.kind == "time"] == ["14:00"]


def test_example_block_memo_gives_the_same_answers():
    text = (
        "Example output:\nDate: 2024-05-01 and 10:00\n\nNotes:\nDate: 2024-05-02\n"
        + "x" * 600
        + "\n2024-05-03"
    )
    memo: dict = {}
    for value in ("2024-05-01", "10:00", "2024-05-02", "2024-05-03"):
        at = text.index(value)
        assert in_example_block(text, at, memo=memo) == in_example_block(text, at)
    assert in_example_block(text, text.index("10:00"), memo=memo)
    assert not in_example_block(text, text.index("2024-05-02"), memo=memo)


def test_a_reply_under_a_likeness_intro_is_an_example_but_a_like_mid_sentence_is_not():
    for intro in ("Confirm the change, reply like this:", "Balas dengan konfirmasi alami kayak:"):
        text = f'{intro}\n> "Done, your lunch is on 31 May 2025."'
        assert in_example_block(text, text.index("31"))
    text = "We would like you to keep today's date in mind:\nToday is 24 April 2025."
    assert not in_example_block(text, text.index("24"))
    assert [v.value for v in find_volatile(text) if v.kind == "date"] == ["24 April 2025"]


def test_a_prose_fence_quoting_a_prompt_that_opens_with_the_assistant_is_prose():
    for opening in ("The assistant is Claude, created by Anthropic.", "助手名为 Claude，由 Anthropic 创建。"):
        text = f"Leaked prompt:\n\n```txt\n{opening}\nThe current date is 2024-06-20.\n```\n"
        assert [v.value for v in find_volatile(text) if v.kind == "date"] == ["2024-06-20"]
    code = "```txt\nprint(2024-06-20)\nThe current date is 2024-06-20.\n```\n"
    assert [v for v in find_volatile(code) if v.kind == "date"] == []


def test_a_like_that_is_a_verb_introduces_no_example():
    text = "Things the user would like:\n- Current date: 2025-04-24\n- Session ID: 4f2a9c1e7b3d"
    assert [v.kind for v in find_volatile(text) if v.kind != "today-phrase"] == ["date", "request-id"]


def test_a_plain_fence_quoting_a_prompt_by_its_name_line_is_prose():
    text = "> 豆包\n\n```\n你的名字是豆包，有很强的专业性。\n\n今天的日期：2024 年 8 月 7 日 星期三\n```\n"
    assert [v.value for v in find_volatile(text)] == ["2024 年 8 月 7 日 星期三"]
    code = "```\nconst today = '2024-08-07';\n```\n"
    assert find_volatile(code) == []


def test_the_turns_of_a_few_shot_dialogue_under_its_intro_are_examples():
    shots = 'User: review this PR (current time: 2025-01-28T09:00:00Z)\n{"due": "2025-01-29T09:00:00Z"}\n\n'
    text = "Examples:\n" + shots * 4
    assert find_volatile(text) == []
    live = "Examples:\nUser: hi\nAssistant: hello\n\nCurrent time: 2025-01-28T09:00:00Z\n"
    assert [v.value for v in find_volatile(live) if v.kind == "time"] == ["2025-01-28T09:00:00Z"]
    alone = "User: remind me (current time: 2025-01-28T09:00:00Z)\n"
    assert [v.value for v in find_volatile(alone) if v.kind == "time"] == ["2025-01-28T09:00:00Z"]


def test_turns_in_capitals_bold_or_other_languages_are_few_shot_turns():
    for intro, user, bot in (
        ("Examples:", "USER:", "ASSISTANT:"),
        ("Examples:", "**User:**", "**Assistant:**"),
        ("示例：", "用户：", "助手："),
        ("Ejemplos:", "Usuario:", "Asistente:"),
    ):
        turns = f"{user} hi\n{bot} hello\n" * 5  # more lines than an intro's own reach
        text = f"{intro}\n{turns}{user} remind me (current time: 2025-01-28T09:00:00Z)\n{bot} done\n"
        assert find_volatile(text) == [], user


def test_a_template_fence_quoting_a_system_prompt_renders_its_slots():
    jinja = "**Prompt Template**:\n```jinja2\nYou are {{ agent_name }}, an assistant.\nIt is {{ time }} now.\n```\n"
    assert jinja.index("{{ time }}") not in CodeSpans(jinja)
    assert "{{ time }}" in [v.value for v in find_volatile(jinja)]
    role = "System message:\n\n```text\n# Role\nCalendar manager.\nCurrent Date: {{ $now }}\n```\n"
    assert "{{ $now }}" in [v.value for v in find_volatile(role)]
    # a template fence that is not a prompt (a syntax sample) and a code fence stay code
    sample = "Usage:\n```jinja2\n{% for d in days %}{{ d.date }}{% endfor %}\nIt is {{ time }} now.\n```\n"
    assert sample.index("{{ time }}") in CodeSpans(sample)
    python = "Intro.\n```python\n# Role\nprompt = f'It is {now} now.'\n```\n"
    assert python.index("{now}") in CodeSpans(python)


def test_an_escaped_line_break_ends_a_line_for_inline_code():
    yaml = 'text: "Use `<break>` to pause.\\n```\\n\\n# Information\\nNow: {current_date_time}\\nNote: `<break>` is a mark.\\n"\n'
    assert yaml.index("{current_date_time}") not in CodeSpans(yaml)
    assert [v.value for v in find_volatile(yaml)] == ["{current_date_time}"]
    inline = 'text: "Write `{current_date_time}` to insert it.\\nMore."\n'
    assert inline.index("{current_date_time}") in CodeSpans(inline)
