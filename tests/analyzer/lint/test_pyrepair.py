"""analyzer.lint.sources.pyrepair: Python excerpts mended so that their prompts can be read, and
real syntax errors left as they are."""

from __future__ import annotations

import pytest

from analyzer.lint.sources import python
from analyzer.lint.sources.pieces import volatile_values


def values(text: str) -> list[str]:
    return [v.value for t in python.templates(text) for v in volatile_values(t) if v.kind != "today-phrase"]


def test_an_indented_method_body_is_read_at_its_own_offsets():
    text = '    def build(self, ctx):\n        result = "You are the assistant."\n        result += f"\\n- Sender: {ctx.get(\'user_id\')}"\n'
    got = [(v.value, t.file_offset(v.start)) for t in python.templates(text) for v in volatile_values(t)]
    assert got == [("{ctx.get('user_id')}", text.index("{ctx"))]


def test_a_method_after_top_level_code_opens_at_the_comment_above_it():
    text = (
        "from datetime import datetime\n\n    # ... (process_message omitted) ...\n\n"
        "    def build(self):\n        now = datetime.now().strftime('%H:%M')\n"
        '        return f"You are Gem.\\n- Current time: {now}"\n'
    )
    got = [(v.value, t.file_offset(v.start)) for t in python.templates(text) for v in volatile_values(t)]
    assert ("{now}", text.index("{now}")) in got
    # no comment line to open it: still a syntax error
    with pytest.raises(SyntaxError):
        python.templates("import os\n\n    def build(self):\n        return 'x'\n")


def test_a_cut_off_string_an_open_call_and_elided_lines():
    cut = 'from datetime import datetime\nPROMPT = f"""You are a memory organizer.\n- Today\'s date is {datetime.now().strftime("%Y-%m-%d")}.\n'
    assert values(cut) == ['{datetime.now().strftime("%Y-%m-%d")}']
    open_call = (
        'now = datetime.now()\nagent = Agent(\n    template=f"The current time is {now}.",\n    tools=[\n'
    )
    assert values(open_call) == ["{now}"]
    elided = 'import os\n[…]\ntoday_date = datetime.now().strftime("%B %d, %Y")\nprompt = TEMPLATE.format(today=today_date)\n'
    assert values(elided) == ["today_date"]


@pytest.mark.parametrize("text", ["PROMPT = f'You are {helpful'\n", "x = = 1\n", "def f(:\n    pass\n"])
def test_a_real_syntax_error_stays_one(text):
    with pytest.raises(SyntaxError):
        python.templates(text)


def test_crlf_elisions_and_as_many_as_the_limit_are_mended():
    crlf = 'import os\r\n[…]\r\ntoday_date = datetime.now().strftime("%B %d, %Y")\r\nprompt = T.format(today=today_date)\r\n'
    assert values(crlf) == ["today_date"]
    many = (
        "import os\n"
        + "[…]\nx = 1\n" * python._MENDS
        + 'prompt = T.format(today=datetime.now().strftime("%Y"))\n'
    )
    assert values(many) == ['datetime.now().strftime("%Y")']
    with pytest.raises(SyntaxError):
        python.templates("import os\n" + "[…]\nx = 1\n" * (python._MENDS + 1))
