"""Code spans of one text as :mod:`.judge` reads them: less the slots a label shows in inline code,
plus the literal values of a Markdown front matter (``date: 2024-7-8 01:00:20``: file metadata).

``- Session ID: `{{ session_id }}``` is still filled by the template engine: the backticks only
format the rendered value, so the slot is judged like any other. A slot shown in backticks inside a
sentence ("write `{{ date }}` to insert the date"), under a label about the template syntax
("Placeholder: `{date}`"), or in a list headed as the template's variables is documentation and
stays code. A slot in a front matter (``CURRENT_TIME: {{ CURRENT_TIME }}``) is still rendered, and so is a value
under a key naming the present (``CURRENT_TIME: 2025-04-24 13:52:03``).

It does NOT judge the slot nor free anything but a whole inline span that is one slot.
"""

from __future__ import annotations

import re

from analyzer.detection import regions

#: one template slot filling a whole inline code span: {{ x }}, {x}, ${x}, <%= x %>
_SLOT = re.compile(r"`[ \t]*(\{\{[^`{}]+\}\}|\{[A-Za-z_][\w.]*\}|\$\{[^`{}]+\}|<%=[^`%]+%>)[ \t]*`")
#: the words before the span: a list item's or a line's key ending in a colon, inline code allowed
_LABEL = re.compile(
    r"^[ \t]*(?:[-*•+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?[^\n:`]{0,60}(?:`[^`\n]*`[^\n:`]{0,30})*[:：](?:\*\*)?[ \t]*$"
)
#: what may stand after the span on its line: nothing but closing punctuation
_TAIL = re.compile(r"[ \t.,;)*]*$")
#: a label or heading about the template syntax itself: the slot is documented, not rendered
_DOCS = re.compile(
    r"(?i)\b(?:placeholders?|variables?|syntax|macros?|usage|use|write|insert|escape|helpers?|filters?)\b"
)
_HEADING_REACH = 8


def label_value(text: str, pos: int) -> bool:
    """The inline span at ``pos`` is one template slot, the whole value of a ``Label:`` line whose
    label and heading are not about the template syntax."""
    ls, le = text.rfind("\n", 0, pos) + 1, text.find("\n", pos)
    le = len(text) if le < 0 else le
    for m in _SLOT.finditer(text, ls, le):
        if m.start() <= pos < m.end():
            before, after = text[ls : m.start()], text[m.end() : le]
            if not (_LABEL.match(before) and _TAIL.match(after)):
                return False
            return not (_DOCS.search(_key(before)) or _documented(text, ls))
    return False


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

    def __contains__(self, pos: int) -> bool:
        if pos < self.front:  # metadata, unless a slot or a value under a "now" key (CURRENT_TIME: …)
            key = self.text[self.text.rfind("\n", 0, pos) + 1 : pos]
            return not (self.text.startswith(("{{", "${", "{%", "<%"), pos) or _NOW_KEY.search(key))
        if not super().__contains__(pos):
            return False
        fences = self._fenced()
        if any(a <= pos < b for a, b in fences):
            return True
        return not label_value(self.text, pos)
