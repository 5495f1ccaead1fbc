"""Code spans of one text as :mod:`.judge` reads them: less the slots a label shows in inline code,
plus the literal values of a Markdown front matter (``date: 2024-7-8 01:00:20``: file metadata).

``- Session ID: `{{ session_id }}``` is still filled by the template engine: the backticks only
format the rendered value, so the slot is judged like any other, and so is one a sentence uses
("calcula la hora usando el valor de `{{hora_actual}}`"). A slot in backticks that a sentence shows
("write `{{ date }}` to insert the date", "such as `{{now}}`"), under a label about the template
syntax ("Placeholder: `{date}`"), opening a list entry ("- `{{ time }}` - the timestamp") or in a
list headed as the template's variables is documentation and stays code. A slot in a front matter (``CURRENT_TIME: {{ CURRENT_TIME }}``) is still rendered, and so is a value
under a key naming the present (``CURRENT_TIME: 2025-04-24 13:52:03``).

``- Current date: `2025-04-24``` is the same with the value already rendered: the span is judged
like plain text (a date, an id, a count), with the same exceptions.

It does NOT judge the slot or the value, nor free anything but a whole inline span that is a
label's whole value.
"""

from __future__ import annotations

import re
from bisect import bisect_right, insort

from analyzer.detection import regions
from analyzer.detection.shapes import braced_expression

#: one template slot filling a whole inline code span: {{ x }}, {x}, ${x}, <%= x %>, or the value a
#: template rendered there with a digit or a brace in it (`2025-04-24`, `sess_8f3a…`, `{"step": 3}`)
_SLOT = re.compile(
    r"`[ \t]*(\{\{[^`{}]+\}\}|\{[A-Za-z_][\w.]*\}|\$\{[^`{}]+\}|<%=[^`%]+%>|[^`\n\d{]{0,100}[\d{][^`\n]{0,100}?)[ \t]*`"
)
#: the words before the span: a list item's or a line's key ending in a colon, inline code allowed
_LABEL = re.compile(
    r"^[ \t]*(?:[-*•+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?[^\n:`]{0,60}(?:`[^`\n]*`[^\n:`]{0,30})*[:：](?:\*\*)?[ \t]*$"
)
#: what may stand after the span on its line: nothing but closing punctuation
_TAIL = re.compile(r"[ \t.,;)*]*$")
#: :data:`_LABEL` read from a line's start (``match(text, ls, end)``: no ``^``, no slice)
_LABEL_AT = re.compile(_LABEL.pattern[1:])
_MARK = re.compile(r"[`:]")
#: a label or heading about the template syntax itself: the slot is documented, not rendered
_DOCS = re.compile(
    r"(?i)\b(?:placeholders?|variables?|syntax|macros?|usage|use|write|insert|escape|helpers?|filters?)\b"
)
#: a sentence that shows a slot rather than uses it ("such as `{{now}}`", "the template tag `{x}`")
_MENTION = re.compile(r"(?i)\b(?:such as|e\.g|for example|like|documentation|inline|code|templat\w*|tags?)\b")
_HEADING_REACH = 8


def label_value(text: str, pos: int, memo: dict | None = None) -> bool:
    """The inline span at ``pos`` is one template slot, the whole value of a ``Label:`` line whose
    label and heading are not about the template syntax. ``memo`` (one per text) keeps each line's
    answers: a line is read once, however many of its positions are asked about."""
    memo = {} if memo is None else memo
    starts = memo.setdefault("", [])  # the starts of the lines read, in order
    i = bisect_right(starts, pos) - 1
    if i < 0 or pos > memo[starts[i]][0]:
        ls, le = text.rfind("\n", 0, pos) + 1, text.find("\n", pos)
        le = len(text) if le < 0 else le
        memo[ls] = (le, *_line_slots(text, ls, le))
        insort(starts, ls)
    else:
        ls = starts[i]
    _, slot_starts, slot_ends, values = memo[ls]
    k = bisect_right(slot_starts, pos) - 1
    return k >= 0 and pos < slot_ends[k] and values[k]


def _line_slots(text: str, ls: int, le: int) -> tuple[list[int], list[int], list[bool]]:
    """Each slot span of the line text[ls:le] (as ``_SLOT.finditer`` finds them) and whether it is
    a label's whole value. Its words hold no ``:`` (backticks pair from the line's start), so
    ``_LABEL`` is tried at most once a line at a ``:`` (the first outside inline code): one pass,
    however many slots the line holds (a line of many ``：`` labels is read once per ``：``)."""
    starts, ends, values = [], [], []
    marks = _MARK.finditer(text, ls, le)  # the backticks and colons, in order
    ticks, first_colon = 0, -1  # backticks so far; the first ``:`` outside code
    shown: bool | None = None  # the line shows slots (documents the syntax) rather than uses them
    mark = next(marks, None)
    for m in _SLOT.finditer(text, ls, le):
        s = m.start()
        while mark is not None and mark.start() < s:
            if mark.group() == "`":
                ticks += 1
            elif first_colon < 0 and ticks % 2 == 0:
                first_colon = mark.start()
            mark = next(marks, None)
        f = s
        while f > ls and text[f - 1] in " \t":
            f -= 1
        if text.startswith("**", f - 2, f) and f - 2 >= ls:
            f -= 2
        f -= 1  # the label's colon, if any
        ok = f >= ls and text[f] in ":："
        if ok and first_colon >= 0 and first_colon != f:
            ok = False  # a ``:`` outside code before it
        if ok:
            ok = bool(_LABEL_AT.match(text, ls, s)) and bool(_TAIL.match(text, m.end(), le))
        if ok:
            ok = not (_DOCS.search(_key(text[ls:s])) or _documented(text, ls))
        elif text[s + 1] in "{$" and text[ls:s].strip(
            " \t-*•+|0123456789.)"
        ):  # inside a sentence, not a list entry
            if shown is None:  # read once a line
                shown = bool(
                    _DOCS.search(text, ls, le) or _MENTION.search(text, ls, le) or _documented(text, ls)
                )
            ok = not shown
        starts.append(s)
        ends.append(m.end())
        values.append(ok)
    return starts, ends, values


def _key(label: str) -> str:
    """The label less its inline code (```Date`` header:`` → `` header:``): code names things."""
    return re.sub(r"`[^`]*`", " ", label)


def _documented(text: str, ls: int) -> bool:
    """The list the line belongs to is headed by a line about the template syntax ("## Variables")."""
    at = ls
    for _ in range(_HEADING_REACH):
        if at == 0:
            return False
        prev = text.rfind("\n", 0, at - 1) + 1
        line = text[prev : at - 1].strip(" \t*_")
        if line and (line.startswith("#") or line.endswith((":", "："))) and not _LABEL_ITEM.match(line):
            return bool(_DOCS.search(line))
        if line and not _LABEL_ITEM.match(line):
            return False
        at = prev
    return False


#: a YAML front matter opening a file: ``---``, key lines, ``---`` (read line by line: one regex over
#: the lines backtracks exponentially when the closing ``---`` never comes)
_FRONT_OPEN = re.compile(r"---[ \t]*\n")
_FRONT_LINE = re.compile(r"[ \t]*(?:[\w-]+[ \t]*:|-[ \t]|#)[^\n]*|[ \t]+[^\n]*|")
_FRONT_CLOSE = re.compile(r"---[ \t]*")
_FRONT_LINES = 80


def _front_matter_end(text: str) -> int:
    m = _FRONT_OPEN.match(text)
    if not m:
        return 0
    pos = m.end()
    for n in range(_FRONT_LINES + 1):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        if n and _FRONT_CLOSE.fullmatch(text, pos, end):
            return end + 1 if nl >= 0 else end
        if nl < 0 or n == _FRONT_LINES or not _FRONT_LINE.fullmatch(text, pos, end):
            return 0
        pos = nl + 1
    return 0


#: a front-matter key naming the present moment: its value is rendered per request
_NOW_KEY = re.compile(r"(?i)(?:current|now|today)[\w -]*:")
#: a sibling line of the list: a key and a value
_LABEL_ITEM = re.compile(r"(?:[-*•+][ \t]+|\d+[.)][ \t]+)?[^\n:]{1,60}[:：][ \t]*\S")


class JudgedCode(regions.CodeSpans):
    """:class:`regions.CodeSpans` less the slots shown in inline code as a label's value."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.front = _front_matter_end(text) if text.startswith("---") else 0
        self._label_memo: dict = {}
        self._records: dict[int, bool] = {}

    def __contains__(self, pos: int) -> bool:
        if pos < self.front:  # metadata, unless a slot or a value under a "now" key (CURRENT_TIME: …)
            key = self.text[self.text.rfind("\n", 0, pos) + 1 : pos]
            return not (self.text.startswith(("{{", "${", "{%", "<%"), pos) or _NOW_KEY.search(key))
        if not super().__contains__(pos):
            return False
        fences = self._fenced()
        fence = next(((a, b) for a, b in fences if a <= pos < b), None)
        if fence is not None:
            if fence[0] not in self._records:
                self._records[fence[0]] = _record_fence(self.text, *fence)
            return not (
                self._records[fence[0]]
                or _lone_fenced_slot(self.text, pos)
                or _lone_fenced_value(self.text, pos)
            )
        return not label_value(self.text, pos, self._label_memo)


#: a line of a rendered record: a key of words and a value after ": " ("Today's date: 2025-11-01")
_DATE_KEY = re.compile(r"(?i)(?:today'?s? date|date|time|datetime)[ \t]*:")
_RECORD_LINE = re.compile(r"[ \t]*[A-Za-z][\w ()'/.-]{0,40}:[ \t]+[^\s{\[(]")


def _record_fence(text: str, a: int, b: int) -> bool:
    """The fence text[a:b] has no info string, every line of its body is a ``Key: value`` line (two
    or more) and a key names now ("Today's date:"): a rendered environment block shown as text."""
    nl = text.find("\n", a, b)
    if nl < 0 or text[a:nl].strip("`~ \t"):
        return False
    end = text.rfind("\n", nl + 1, b) if text[b - 3 : b] in ("```", "~~~") else b
    lines = [ln for ln in text[nl + 1 : max(end, nl + 1)].split("\n") if ln.strip()]
    return (
        len(lines) >= 2
        and all(_RECORD_LINE.match(ln) for ln in lines)
        and any(_NOW_KEY.match(ln.strip()) or _DATE_KEY.match(ln.strip()) for ln in lines)
    )


#: a fence holding one template slot and nothing else: "```\n{{ local_datetime }}\n```"
_LONE_SLOT = re.compile(r"[ \t]*(?:\{\{[^{}\n]+\}\}|\{[A-Za-z_][\w.]*\}|\$\{[^{}\n]+\})[ \t]*\n[ \t]*```")


def _lone_fenced_slot(text: str, pos: int) -> bool:
    """The slot at ``pos`` is a fence's whole body: the template renders a value there (a syntax
    example shows more than a bare slot); n8n's JavaScript expression over lines too."""
    ls = text.rfind("\n", 0, pos) + 1
    above = text.rfind("\n", 0, max(ls - 1, 0)) + 1
    if not text.startswith("```", above) or text[ls:pos].strip():
        return False
    if _LONE_SLOT.match(text, ls):
        return True
    end = braced_expression(text, pos) if text.startswith("{{", pos) else -1
    return end > 0 and bool(_FENCE_CLOSE.match(text, end))


#: what may follow a fence's whole-body expression: its closing mark
_FENCE_CLOSE = re.compile(r"[ \t]*\n[ \t]*```")


#: a label that introduces an example, not a value ("Example output:", "e.g.:")
_EXAMPLE_LABEL = re.compile(r"(?i)example|sample|e\.g\.|for instance|like this|ejemplo|exemple|beispiel|例")


def _lone_fenced_value(text: str, pos: int) -> bool:
    """The value at ``pos`` is the one short line of a bare fence right under a label line
    ("Current datetime, ISO format:\n```\n2025-04-24 13:52:03\n```"): a slot the app rendered there."""
    ls = text.rfind("\n", 0, pos) + 1
    le = text.find("\n", pos)
    above = text.rfind("\n", 0, max(ls - 1, 0)) + 1
    if le < 0 or ls == 0 or not text.startswith("```", le + 1) or text[above : ls - 1].strip() != "```":
        return False
    if len(text[ls:le].strip()) > 60 or above == 0 or text[ls:pos].strip() or text[pos] in "{$<%":
        return False  # a long line, no label, a value that does not open the line, a slot (its own rule)
    label = text[text.rfind("\n", 0, above - 1) + 1 : above - 1].strip()
    return label.endswith((":", "：")) and not _EXAMPLE_LABEL.search(label)


def in_statement(text: str, at: int) -> bool:
    """Inside a template statement on its line (``{% set d = "26 Jul 2024" %}``): template code."""
    ls = text.rfind("\n", 0, at) + 1
    k = text.rfind("{%", ls, at)
    return k >= 0 and text.find("%}", k, at) < 0


def unrendered(text: str, at: int) -> bool:
    """Inside a Jinja ``{% raw %}`` block or a ``{# … #}`` comment: a slot there is left as written."""
    opened = text.rfind("{#", 0, at)
    if opened > text.rfind("#}", 0, at) and text.find("#}", at) >= 0:
        return True
    raw = max(text.rfind("{% raw", 0, at), text.rfind("{%- raw", 0, at))
    return raw >= 0 and text.find("endraw", raw, at) < 0


def slot_form(text: str, start: int, end: int) -> str:
    """A slot as written, spaces aside: ``{current_date}`` and ``{{ current_date }}`` are other engines' slots."""
    return "".join(text[start:end].split())
