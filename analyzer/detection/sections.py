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
from itertools import accumulate

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


def _headings(text: str) -> list[tuple[int, int, int]]:
    """The Markdown headings of ``text`` (hashes at a line start, then a space or a tab) as (line
    start, line end, level), in order; each "#" found by ``memchr``, a heading's line skipped whole."""
    heads = []
    k = text.find("#")
    while k >= 0:
        if k and text[k - 1] != "\n":
            k = text.find("#", k + 1)
            continue
        le = text.find("\n", k)
        le = len(text) if le < 0 else le
        level = k
        while level < le and text[level] == "#":
            level += 1
        level -= k
        if level <= 6 and text[k + level : k + level + 1] in (" ", "\t"):
            heads.append((k, le, level))
        k = text.find("#", le)
    return heads


def _naming(text: str, heads: list[tuple[int, int, int]]) -> list[int]:
    """The indices of the headings whose line names examples (:func:`_named_example`), in order. The
    lines are joined and lowered once: where they are ASCII, each word is found in one pass."""
    lines = [text[ls:le] for ls, le, _ in heads]
    joined = "\n".join(lines)  # no word holds a line break: none is found across two lines
    if not joined.isascii():
        return [i for i, line in enumerate(lines) if _named_example(line)]
    low = joined.lower()
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    hits = set()
    for w in _HEADING_WORDS:
        k = low.find(w)
        while k >= 0:
            hits.add(bisect.bisect_right(starts, k) - 1)
            k = low.find(w, k + 1)
    return [i for i in sorted(hits) if _EXAMPLE_HEADING.search(lines[i])]


def _sections(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """The example sections of ``text`` as (start, end) spans, sorted, and their starts. A heading
    inside a code fence is none; a section ends at the next heading of its level or above."""
    heads = _headings(text)
    named = _naming(text, heads)
    if not named:
        return [], []
    fenced = "```" in text or find_led(text, "~~~") >= 0  # "~" by memchr, not a 3-character scan
    fences = regions.code_fence_spans(text) if fenced else []
    inside = {i for i, (ls, _, _) in enumerate(heads) if fences and regions.in_spans(fences, ls)}
    spans: list[tuple[int, int]] = []
    for i in named:
        ls, le, level = heads[i]
        if i in inside or _OF_A_PROMPT.search(text, ls, le) or not text[:ls].strip():
            continue  # "# Example Prompt", a text's title: the prompt itself, not examples in it
        after = (s for j, (s, _, lv) in enumerate(heads[i + 1 :], i + 1) if lv <= level and j not in inside)
        if not spans or ls >= spans[-1][1]:
            spans.append((ls, next(after, len(text))))
    return [a for a, _ in spans], spans


def in_example_section(text: str, at: int, memo: dict) -> bool:
    """``at`` lies in a section under a heading that names examples."""
    got = memo.get(("example-sections",))
    if got is None:
        got = memo[("example-sections",)] = _sections(text) if "#" in text else ([], [])
    starts, spans = got
    i = bisect.bisect_right(starts, at) - 1
    return i >= 0 and at < spans[i][1]
