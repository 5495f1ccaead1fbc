"""Place and weather slots that a prompt hands over as the material to work on: content, not state.

``{weather}`` or ``{location}`` alone is read as the user's surroundings (:mod:`.names`). Where
the prompt says they are its input, they are the request's content: a slot alone on its
paragraph under "Here is the weather:" ("Hier ist das Wetter:", "Voici la météo :"), or in a
sentence about the text it is given ("In the following text the weather in {location} is given",
"In dem folgenden Text …"). :func:`introduced` gives the names of such slots in one text; every
slot of those names there is content. A memory slot said to hold what was found for this
conversation ("memories related to the current conversation", "相关记忆"), or one a prompt is asked to
update ("Existing chat memory:"), is content too: :func:`retrieved`.

It does NOT touch slots of other names (``{date}``, ``{user_name}``), nor ones said to be the user's.
"""

from __future__ import annotations

import re

from analyzer.detection import names, vocab

#: the names these rules may call content
_PLACE = vocab.WHERE - {"timezone", "tz", "zone", "locale"} | {"weather", "forecast", "place"}
_SLOT = re.compile(r"\{\{?\s*([A-Za-z_][\w.]*)\s*\}?\}")
#: "Here is the weather:" on its own line, then the slot alone on its paragraph
_HERE = re.compile(
    r"(?im)^[ \t]*(?:here (?:is|are)|below (?:is|are)|hier (?:ist|sind)|voici|voilà|aquí (?:está|están)|ecco)"
    r"\b(?P<what>[^\n:]{0,40})[:：][ \t]*\n(?:[ \t]*\n)?[ \t]*\{\{?\s*(?P<x>[A-Za-z_][\w.]*)\s*\}?\}[ \t]*$"
)
#: a sentence about the text the prompt is given
_GIVEN_TEXT = re.compile(
    r"(?i)\b(?:the following|the given|the provided|this|the) (?:text|article|message|passage|report)\b"
    r"|\b(?:text|article) below\b|\b(?:de[mnr]|die|das)? ?folgenden? text\b|\ble texte (?:suivant|ci-dessous)\b"
    r"|\bel (?:siguiente )?texto(?: siguiente)?\b|\bil (?:seguente )?testo\b"
)
#: a word each alternative of :data:`_GIVEN_TEXT` holds
_GIVEN_WORDS = ("text", "article", "message", "passage", "report", "testo")


def _given_text(sentence: str) -> bool:
    """``_GIVEN_TEXT.search(sentence)``, skipped where an ASCII sentence (lowered: exact) has none of its words."""
    if sentence.isascii():
        low = sentence.lower()
        if not any(w in low for w in _GIVEN_WORDS):
            return False
    return bool(_GIVEN_TEXT.search(sentence))


_SENTENCE = re.compile(r"[^.!?\n]+")
_OWN = re.compile(r"(?i)\b(?:user|users|my|your|current|benutzer|nutzer|utilisateur|usuario)\b")


def _place(expr: str) -> bool:
    return bool(set(names.words(expr.rsplit(".", 1)[-1])) & _PLACE)


#: a line that opens with a brace: where every :data:`_HERE` ends (found by ``str.find`` speed)
_BRACE_LINE = re.compile(r"\n[ \t]*\{")


def _here(text: str) -> list[re.Match]:
    """What ``_HERE.finditer`` finds, tried only on the line or two before a brace line (its
    matches start at a line's start and cannot overlap): no pass of a ``^`` pattern over the text."""
    found = []
    for g in _BRACE_LINE.finditer(text):
        p1 = text.rfind("\n", 0, g.start())
        p2 = text.rfind("\n", 0, p1) if p1 > 0 else -1
        for st in (p2 + 1, p1 + 1) if p1 >= 0 else (0,):
            m = _HERE.match(text, st)
            if m and m.start() not in {f.start() for f in found[-2:]}:
                found.append(m)
    return found


def introduced(text: str) -> frozenset[str]:
    """The names of the place and weather slots ``text`` hands over as its material."""
    if "{" not in text:
        return frozenset()
    out = set()
    for m in _here(text):
        if _place(m.group("x")) and not _OWN.search(m.group("what")):
            out.add(m.group("x"))
    p, b = text.find("{"), 0
    while p >= 0:  # only the sentences holding a brace, each read once, left to right
        r = max(text.rfind(ch, b, p) for ch in ".!?\n")  # the last sentence ended at text[b]
        a = r + 1 if r >= 0 else b
        b = _SENTENCE.match(text, a).end()
        sentence = text[a:b]
        if _given_text(sentence) and not _OWN.search(sentence):
            out.update(x for x in _SLOT.findall(sentence) if _place(x))
        p = text.find("{", b)
    return frozenset(out)


def content(text: str, expr: str, memo: dict) -> bool:
    """The slot ``expr`` of ``text`` is a place or the weather that ``text`` is given to work on;
    ``memo`` (one per text and call, never kept across calls) holds the text's introduced names."""
    if "{" not in text:
        return False
    got = memo.get(("introduced",))
    if got is None:
        got = memo[("introduced",)] = introduced(text)
    return expr.strip() in got


#: words that say a memory block was looked up for this request: memories recalled by relevance to it, or
#: the chat itself ("memories related to the current conversation", "relevant memories", "相关记忆")
_FOUND_FOR_THIS = re.compile(
    r"(?i)\b(?:relevant|related|pertinent|retrieved|recalled)[ \t]+(?:long[- ]term[ \t]+)?memor"
    r"|\b(?:related|relevant|pertinent)[ \t]+to[ \t]+(?:the[ \t]+|this[ \t]+)?current[ \t]+"
    r"(?:conversation|topic|query|question|message|request)\b"
    r"|\bmemor(?:y|ies)[ \t]+(?:on|about)[ \t]+(?:the[ \t]+)?(?:current[ \t]+)?topic\b"
    r"|\b(?:current|this)[ \t]+(?:conversation|chat)[ \t]+history\b|相关的?记忆|相關的?記憶|関連(?:する)?記憶"
)


def retrieved(text: str, at: int, expr: str, why: str) -> bool:
    """A memory slot (``{memories}``, ``{chat_memory}``: ``why`` is its name's memory-block verdict, not a
    reading such as ``{free_memory}``) whose line or the three before it say it holds what was found
    for this request, or in a prompt whose task is to update the memory: content, as retrieved documents are."""
    if not why.endswith(vocab.MEMORY_BLOCK) or not set(names.words(expr)) & vocab.MEMORY:
        return False
    lo = at
    for _ in range(4):  # its line and the three before it, at most 300 characters back
        lo = text.rfind("\n", max(0, at - 300), max(lo - 1, 0))
        if lo < 0:
            break
    return (
        _FOUND_FOR_THIS.search(text, max(lo, at - 300, 0), at) is not None
        or _MEMORY_TASK.search(text, max(0, at - _TASK_REACH), at) is not None
    )


_TASK_REACH = 600  # characters before the slot: its own instructions and label, a bounded read per slot
#: a prompt whose task is the memory or the persona itself ("Update the chat memory with …", "Existing chat
#: memory:", "Update the persona only if …"): the memory slot is the material it rewrites
_MEMORY_TASK = re.compile(
    r"(?i)\b(?:update|updating|rewrite|rewriting|refresh|merge|merging|consolidate|consolidating|revise|compress"
    r"|compressing)\b[^.\n]{0,50}\b(?:memor(?:y|ies)|persona|personality|profile)\b"
    r"|\b(?:existing|previous|old)[ \t]+(?:\w+[ \t]+){0,2}(?:memor(?:y|ies)|persona|personality)\b"
    r"|更新(?:记忆|記憶)|(?:已有|现有|現有)的?(?:记忆|記憶)"
)
