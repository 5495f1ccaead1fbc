"""The Markdown sections of one text whose heading names examples ("## Example Conversations",
"### Few-shot examples", "## 示例"): every line down to the next heading of the same level or above
shows how things look, so a value written out there is fixed text, not a live one. A heading that
opens the text (its title) or names a prompt or a context ("# Example Prompt", "## Sample Letta Context")
heads the prompt itself.

:func:`in_example_section` answers for one offset; the headings are found once per text (one
``str.find`` pass over line starts) and kept in the caller's memo.

It does NOT say anything about template slots (a slot in an example is rendered there too: the
judge asks only for written-out values) nor about intro lines ending in a colon (:mod:`.regions`).
"""

from __future__ import annotations

import bisect
import re

from analyzer.detection import regions
from analyzer.detection.prefilters import find_led, holds_any

_EXAMPLE_HEADING = re.compile(
    r"(?i)\b(?:examples?|samples?|few[- ]?shots?|demonstrations?|example (?:conversations?|dialogues?|"
    r"interactions?|outputs?|responses?|exchanges?)|beispiele?|exemples?|ejemplos?|exemplos?|esempi[oa]?)\b"
    r"|示例|例子|范例|範例|样例|樣例|例文|対話例|会話例|예시|예제"
)


_OF_A_PROMPT = re.compile(
    r"(?i)\b(?:prompts?|templates?|system message|context)\b|提示词|プロンプト|프롬프트"
)


#: a literal of each :data:`_EXAMPLE_HEADING` alternative, lowered: an ASCII heading with none names no example
_HEADING_WORDS = ("xampl", "sampl", "shot", "demonstrat", "beispiel", "exempl", "ejempl", "esemp")


def _named_example(line: str) -> bool:
    """``_EXAMPLE_HEADING`` finds a name of examples in the heading ``line`` (an ASCII heading
    lowered is exact, so one holding none of its literals is answered without the regex)."""
    if line.isascii() and not holds_any(line.lower(), _HEADING_WORDS):
        return False
    return _EXAMPLE_HEADING.search(line) is not None


def _sections(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """The example sections of ``text`` as (start, end) spans, sorted, and their starts."""
    heads: list[tuple[int, int, bool]] = []  # (line start, level, names examples)
    fenced = "```" in text or find_led(text, "~~~") >= 0  # "~" by memchr, not a 3-character scan
    fences = regions.code_fence_spans(text) if fenced else []
    k = 0 if text.startswith("#") else find_led(text, "\n#", 1)  # a "#" by memchr, then its line start
    while k >= 0:
        ls = k if k == 0 and text.startswith("#") else k + 1
        le = text.find("\n", ls)
        le = len(text) if le < 0 else le
        line = text[ls:le]
        level = len(line) - len(line.lstrip("#"))
        if (
            level <= 6
            and line[level : level + 1] in (" ", "\t")
            and not (fences and regions.in_spans(fences, ls))
        ):
            example = _named_example(line) and not (
                _OF_A_PROMPT.search(text, ls, le) or not text[:ls].strip()
            )  # "# Example Prompt", a text's title: the prompt itself, not examples in it
            heads.append((ls, level, example))
        k = find_led(text, "\n#", 1, start=le)
    spans = []
    for i, (ls, level, example) in enumerate(heads):
        if example:
            end = next((s for s, lv, _ in heads[i + 1 :] if lv <= level), len(text))
            if not spans or ls >= spans[-1][1]:
                spans.append((ls, end))
    return [a for a, _ in spans], spans


def in_example_section(text: str, at: int, memo: dict) -> bool:
    """``at`` lies in a section under a heading that names examples."""
    got = memo.get(("example-sections",))
    if got is None:
        got = memo[("example-sections",)] = _sections(text) if "#" in text else ([], [])
    starts, spans = got
    i = bisect.bisect_right(starts, at) - 1
    return i >= 0 and at < spans[i][1]
