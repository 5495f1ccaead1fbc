"""A memory kept for the user or the agent, under a heading that names it: "# Long-term Memory",
"Durable memory:", "<memory>", "Core memory:", "### コアメモリ", and in other languages a short heading
holding the word ("## Memoria a largo plazo", "GEÇMİŞ TURLAR (hafızan):", "## Долгосрочная память").

:func:`under_memory_heading` says a slot sits alone right under such a heading (the slot is the
block); :func:`rendered_blocks` finds, once a template is filled, the lines under one (a list or a
paragraph, to the next blank line or heading) and adds them as one ``state`` candidate of shape
``memory``: the block is carried into every request of the session and changes as it learns.

It does NOT read memories found for this request ("Relevant memories:": content, :mod:`.given`),
nor judge (:mod:`.judge` drops examples).
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate

#: "memory" in Spanish, Italian, Portuguese, French, German, Russian, Turkish, Polish, Dutch, Chinese,
#: Japanese and Korean (as a heading's word: the heading may hold a few more)
_OTHER = (
    r"memoria|memória|mémoire|gedächtnis|langzeitgedächtnis|erinnerungen|памят[ьи]|haf[ıi]za\w*|bellek|pamięć|"
    r"geheugen|记忆|記憶|メモリ|메모리|기억"
)
#: memories found for this request are content ("Memorias relevantes:", "相关记忆")
_FOUND = r"relevant|pertinent|encontrad|trouvé|gefunden|найденн|релевант|相关|関連|관련"
#: a short heading holding such a word: no list item, no sentence (a comma, a full stop …)
_SHORT = rf"(?![-*•+\d]|[A-Za-z][.)])[^\n:：<>#*，。、,.;!?！？]{{0,20}}?(?:{_OTHER})[^\n:：<>#*，。、,.;!?！？]{{0,16}}?"
#: where :func:`rendered_blocks` looks for a heading: "memor" (memory, memoria) and Dutch "geheugen" in any
#: text, the other languages' words in a text that is not ASCII (German and Turkish seldom are)
_ASCII_ANCHORS = ("memor", "geheugen")
_OTHER_ANCHORS = (
    "erinnerung",
    "hafiza",
    "bellek",
    "memória",
    "mémoire",
    "gedächtnis",
    "памят",
    "hafıza",
    "pamięć",
    "记忆",
    "記憶",
    "メモリ",
    "메모리",
    "기억",
)
#: a heading, tag or label line naming a memory kept for the user or the agent, not one found for the request
KEPT_MEMORY = re.compile(
    r"(?i)[ \t]*(?:#{1,4}[ \t]*|<)?(?:\*\*)?(?:(?:long[- ]?term|core|persistent|permanent|durable|user|agent|your|saved)"
    r"[ \t_-]+)?memory(?:[ \t_-]+(?:block|context|bank))?(?:\*\*)?[ \t]*(?:>|[:：])?(?:\*\*)?[ \t]*"
    r"|[ \t]*#{0,4}[ \t]*(?:长期记忆|核心记忆|長期記憶|コアメモリ|장기[ \t]?기억)[^\n]{0,20}"
    rf"|(?![^\n]*?(?:{_FOUND}))[ \t]*(?:#{{1,4}}[ \t]*(?:\*\*)?{_SHORT}(?:\*\*)?[ \t]*[:：]?"
    rf"|(?:\*\*)?{_SHORT}(?:\*\*)?[ \t]*[:：](?:\*\*)?)[ \t]*"
)
#: a line that is a template's slot or a tag, not rendered memory
_NOT_RENDERED = re.compile(r"[ \t]*(?:\{|\$\{|<%|</?[A-Za-z])")
#: a template's slot anywhere in a line: the template is not rendered yet (the slot rules read it)
_SLOT_INSIDE = re.compile(r"\{\{?[ \t]*[A-Za-z_]|\$\{|<%")
#: a line that tells the assistant what to do with its memory (a section about memory, not one)
_INSTRUCTION = re.compile(
    r"(?i)[ \t]*(?:[-*•]|\d+[.)])?[ \t]*(?:\*\*)?(?:do|don't|never|always|use|only|you|your|the assistant|if|when"
    r"|save|store|remember|update|keep|call|write|read|check|avoid|treat|refer|note|this|these|it|memory|memories)\b"
)
_REACH = 40  # lines of one block at most
#: a config key's line under "memory:" (YAML, TOML): the memory's settings, not what it holds
_SETTING_LINE = re.compile(
    r"(?i)[ \t]+(?:enabled|disabled|enable|window|size|type|max_\w+|limit|ttl|provider|backend|strategy)\w*"
    r"[ \t]*[:=][ \t]*(?:true|false|null|none|\d+|)[ \t]*\r?$"  # indented, a plain scalar or a nested key
)


def under_memory_heading(text: str, start: int, end: int) -> bool:
    """The slot text[start:end] is alone on its line, right under a line naming a kept memory block."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    le = len(text) if le < 0 else le
    if text[ls:start].strip() or text[end:le].strip() or ls == 0:
        return False
    above = text.rfind("\n", 0, ls - 1) + 1
    return KEPT_MEMORY.fullmatch(text, above, ls - 1) is not None


def rendered_blocks(text: str, low: str, out: list[Candidate]) -> None:
    """The lines under each kept-memory heading (found at each anchor word), as one candidate a block."""
    done: set[int] = set()  # the headings read: one heading, one block, whichever of its words found it
    for word in _ASCII_ANCHORS if text.isascii() else _ASCII_ANCHORS + _OTHER_ANCHORS:
        k = low.find(word)
        while k >= 0:
            ls = text.rfind("\n", 0, k) + 1
            le = text.find("\n", k)
            le = len(text) if le < 0 else le
            if ls not in done and KEPT_MEMORY.fullmatch(text, ls, le) and (span := _block(text, le)):
                out.append(Candidate("state", *span, HIGH, "memory", text[ls:le].strip()))
                done.add(ls)
            k = low.find(word, le)


def _block(text: str, le: int) -> tuple[int, int] | None:
    """The lines after the heading line ending at ``le``: one blank line may come first; they end at a
    blank line or a heading. None when there are none or they are slots or tags."""
    pos = le + 1
    if text.startswith("\n", pos):
        pos += 1
    start, end = pos, pos
    for _ in range(_REACH):
        nl = text.find("\n", pos)
        nl = len(text) if nl < 0 else nl
        line = text[pos:nl]
        if not line.strip() or line.lstrip().startswith(("#", "</")):
            break  # a blank line, a heading or the block's closing tag ("</memory>")
        if _NOT_RENDERED.match(line) or _INSTRUCTION.match(line) or _SLOT_INSIDE.search(line):
            return None  # a slot, a tag, or a line of instructions about memory: no rendered block
        if pos == start and _SETTING_LINE.match(line):
            return None  # "memory:\n  enabled: false\n  window: …": a config's memory settings
        end = pos + len(line.rstrip())
        if nl >= len(text):
            break
        pos = nl + 1
    return (start, end) if end > start else None
