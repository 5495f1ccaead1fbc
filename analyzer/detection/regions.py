"""The regions of one text where nothing is a live value: code and examples.

:class:`CodeSpans` (fenced and inline code) and :class:`ExampleTags` (``<example>`` elements),
each found once per text on first use; :func:`in_example_block` says whether a value sits under a
line that introduces an example ("Example output:"); :func:`title_like`, whether a line is a title.

It does NOT decide anything (:mod:`.judge` does).
"""

from __future__ import annotations

import bisect
import math
import re

from analyzer.detection.context import line_bounds
from analyzer.detection.prefilters import find_led

_EXAMPLE_INTRO = re.compile(
    r"(?i)(?:\b(?:examples?|e\.g\.|for instance|samples?|sample output|illustration|exemples?|ejemplos?|exemplos?"
    r"|beispiele?|esempi[oa]?|przykład|voorbeeld|contoh(?:nya)?|misalnya"
    r"|例えば|例如|比如|示例|例子|예시|예)\b[^\n]{0,60}[:：][ \t]*$"
    # "reply like this:", "balas kayak gini:": a likeness word at the end, one word at most after it
    r"|\b(?:like[ \t]+(?:this|that|so|these)|such as|seperti(?:[ \t]+\w+)?|kayak(?:[ \t]+\w+)?)[ \t]*[:：][ \t]*$"
    # "respond in this exact plain-text format:": the lines under it show the shape, not live values
    r"|\b(?:in|using|with|follow|follows|following)\b[^\n:]{0,40}\b(?:format|template)\W{0,3}:[ \t]*$)"
)


def in_example_block(
    text: str, start: int, max_lines: int = 6, reach: int = 480, memo: dict | None = None
) -> bool:
    """The value sits under a line that introduces an example ("Example output:"), with at most
    one blank line right under it (looking ``max_lines`` lines and ``reach`` characters back).
    ``memo`` (one dict per text) keeps the answer per line: values on one line share it."""
    ls = text.rfind("\n", max(0, start - reach), start) + 1
    if ls == 0:
        return False
    if memo is None:
        return _under_intro(text, ls, max_lines, reach)
    key = ("example-block", ls, max_lines, reach)
    got = memo.get(key)
    if got is None:
        got = memo[key] = _under_intro(text, ls, max_lines, reach) or _in_few_shots(text, ls)
    return got


#: a line of a few-shot dialogue: a speaker's turn ("User: …", "Q: …") or a JSON answer
_SHOT_LINE = re.compile(
    r"[ \t]*(?:[-*][ \t]+)?(?:\*\*)?(?i:User|Human|Assistant|AI|Bot|Input|Output|Q|A|Question|Answer|Customer|Agent"
    r"|Model|Response|Reply|Tool|Tool_result|Usuario|Asistente|Utilisateur|Assistant|Benutzer|Usuário|Assistente"
    r"|Utente|用户|助手|ユーザー|アシスタント|사용자|어시스턴트)(?:\*\*)?[ \t]*[:：]|[ \t]*[{}\[\]]"
)
_SHOTS_REACH = 60  # lines


def _in_few_shots(text: str, ls: int) -> bool:
    """The line at ``ls`` is a turn of a few-shot dialogue under an example's intro: every line
    between them is a turn, a JSON answer or blank ("Examples:", "User: … (current time: …)", …)."""
    if not _SHOT_LINE.match(text, ls):
        return False
    end = ls - 1
    for _ in range(_SHOTS_REACH):
        if end <= 0:
            return False
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if _intro(line):
            return True
        if line.strip() and not _SHOT_LINE.match(line):
            return False
        end = start - 1
    return False


def _under_intro(text: str, ls: int, max_lines: int, reach: int) -> bool:
    """The line starting at ``ls`` stands under an example's intro line (see :func:`in_example_block`)."""
    lines = text[max(0, ls - reach) : ls - 1].split("\n")[-max_lines:]
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not line.strip():
            # one blank line may stand right under the intro ("EXAMPLE 1:", "", the example)
            return i > 0 and _intro(lines[i - 1])
        if _intro(line):
            return True
    return False


_EXAMPLE_TAG = re.compile(r"(?i)<(/?)(?:examples?|samples?|demo|few[_-]?shots?|illustration)\b[^>\n]{0,80}>")


class ExampleTags:
    """The ``<example>`` (``<examples>``, ``<sample>``, ``<few_shot>`` …) elements of one text, found on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._spans: list[tuple[int, int]] | None = None

    def __contains__(self, pos: int) -> bool:
        if self._spans is None:
            spans, opened = [], -1
            if "<" in self.text:
                for m in _EXAMPLE_TAG.finditer(self.text):
                    if not m.group(1) and opened < 0:
                        opened = m.end()
                    elif m.group(1) and opened >= 0:
                        spans.append((opened, m.start()))
                        opened = -1
            if opened >= 0:
                spans.append((opened, len(self.text)))
            self._spans = spans
        return in_spans(self._spans, pos)


def _intro(line: str) -> bool:
    """An example's intro: a line ending in a colon that names one ("Example output:", "Exemple :"),
    or one opening with "Example:" and going on ("Exemple : « Planifie 3 révisions »")."""
    if line.rstrip().endswith((":", "：")) and _EXAMPLE_INTRO.search(line[-120:]):
        return True
    return bool(_EXAMPLE_LEAD.match(line))


#: a line that opens with "Example:" in some language and goes on with the example itself
_EXAMPLE_LEAD = re.compile(
    r"(?i)[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(?:examples?|exemples?|ejemplos?|exemplos?|beispiele?|esempi[oa]?|例|示例|예시)"
    r"(?:[ \t]*\d+)?(?:\*\*)?[ \t]*[:：]"
)


#: info strings of fences that hold prose, not code
_PROSE = frozenset(("txt", "text", "plain", "plaintext", "markdown", "md", "prompt"))


def _marks(text: str) -> list[tuple[int, str]]:
    """Each fence mark at the start of a line (after indentation): its offset and its run (```` ``` ````, ``~~~~``)."""
    marks: list[tuple[int, str]] = []
    for mark in ("```", "~~~"):
        k = find_led(text, mark)
        while k >= 0:
            ls = text.rfind("\n", max(0, k - 64), k) + 1
            run = k + 3
            while text[run : run + 1] == mark[0]:
                run += 1
            if (ls or k < 64) and not text[ls:k].strip(" \t"):
                marks.append((k, text[k:run]))
            k = find_led(text, mark, start=run)
    return sorted(marks)


def _paired(text: str, marks: list[tuple[int, str]]) -> list[tuple[int, int, str, str]]:
    """Fences as (start, end, opening mark, info string): a shorter mark inside a longer fence is its content."""
    spans: list[tuple[int, int, str, str]] = []
    opened: tuple[int, str, str] | None = None
    for k, mark in marks:
        nl = text.find("\n", k)
        info = text[k + len(mark) : nl if nl >= 0 else len(text)].strip(mark[0] + " \t")
        if opened is not None and (mark[0] != opened[1][0] or len(mark) < len(opened[1])):
            continue
        if opened is not None and not info:
            spans.append((opened[0], len(text) if nl < 0 else nl, opened[1], opened[2]))
            opened = None
        elif opened is None or info:  # a fence with an info string opens one, even inside another
            if opened is not None:
                spans.append((opened[0], k, opened[1], opened[2]))
            opened = (k, mark, info)
    if opened is not None:  # never closed: to its first blank line
        end = text.find("\n\n", opened[0])
        spans.append((opened[0], len(text) if end < 0 else end, opened[1], opened[2]))
    return spans


#: the opening words of a system prompt ("You are ChatGPT, …") in several languages
_PROMPT_OPENING = re.compile(
    r"(?:(?:You are|You're|Your name is|Your role is|Act as|I want you to act|Du bist|Tu es|Vous êtes|Eres|Tu eres"
    r"|Sei|Você é|The assistant is|Ты|Вы|Jesteś|Sen)\b"
    r"|你是|你的名字是|你叫|你将扮演|あなたは|당신은|助手名为|助手是|アシスタントは"
    r"|#{1,3}[ \t]*(?:Role|Persona|Identity|Character|角色|人设|身份)\b)"
)
#: info strings of fences holding a template's text: a prompt quoted there is rendered by it
_TEMPLATES = frozenset(("jinja", "jinja2", "j2", "handlebars", "hbs", "mustache", "liquid", "django", "tmpl"))


def _quoted_prompt(text: str, a: int, info: str) -> bool:
    """The fence at ``a`` (no info string, or a prose one) opens with a system prompt's first words."""
    if info and info.lower() not in _PROSE and info.lower() not in _TEMPLATES:
        return False
    nl = text.find("\n", a)
    return nl >= 0 and bool(_PROMPT_OPENING.match(text, nl + 1))


def in_spans(spans: list[tuple[int, int]], at: int) -> bool:
    """``at`` lies in the last of ``spans`` (sorted by start) that starts at or before it."""
    i = bisect.bisect_right(spans, (at, math.inf)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def code_fence_spans(text: str) -> list[tuple[int, int]]:
    """The fenced blocks of ``text`` whose info string names code (```` ```python ````; not a bare or
    a prose fence, which may quote a prompt), (start, end), in order."""
    return [(a, b) for a, b, _, info in _paired(text, _marks(text)) if info and info.lower() not in _PROSE]


class CodeSpans:
    """Fenced (```` ``` ````/``~~~``) and inline (`` `…` ``) code of one text, found on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.any = "`" in text or find_led(text, "~~~") >= 0  # "~" by memchr, not a 3-character scan
        self._fences: list[tuple[int, int]] | None = None

    def _fenced(self) -> list[tuple[int, int]]:
        if self._fences is None:
            text = self.text
            marks = _marks(text)
            fences: list[tuple[int, int]] = []
            for a, b, mark, info in _paired(text, marks):
                if _quoted_prompt(text, a, info) or (a < 200 and b - a >= max(500, len(text) // 2)):
                    # a fence opening with a system prompt's first words, or a long one opening the text
                    # and holding most of it, wraps a quoted prompt: the prompt's own code samples inside
                    # stay code, its prose fences (```txt) do not
                    inner = [m for m in marks if a < m[0] < b and len(m[1]) < len(mark)]
                    fences += [(x, y) for x, y, _, info in _paired(text, inner) if info.lower() not in _PROSE]
                else:
                    fences.append((a, b))
            self._fences = sorted(fences)
        return self._fences

    def __contains__(self, pos: int) -> bool:
        if not self.any:
            return False
        text = self.text
        fences = self._fenced()
        if in_spans(fences, pos):
            return True
        ls, le = line_bounds(text, pos, pos)
        if (k := text.rfind("\\n", ls, pos)) >= 0:  # a quoted string's escaped line breaks end its lines too
            ls = k + 2
        if (k := text.find("\\n", pos, le)) >= 0:
            le = k
        ticks = text.count("`", ls, pos)
        return ticks % 2 == 1 and text.find("`", pos, le) >= 0


def title_like(line: str) -> bool:
    """A heading or title above a list ("## Free Webinar", "**Workshop:**", "Spring Concert"), not a
    sentence ("You help users discover concerts and events.")."""
    bare = line.strip()
    if bare.startswith(("#", "**")) or bare.endswith(":"):
        return True
    return len(bare.split()) <= 8 and not bare.startswith("you") and not bare.endswith((".", "!", "?"))
