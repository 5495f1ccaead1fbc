"""Which string literals in code are prompts?

A literal or template is a prompt when the code names it like one (assigned to, passed as,
keyed by or returned from ``*prompt*``, ``system``, ``instructions``, ``template`` …:
:data:`PROMPT_NAME`, not ``message``; or built by a ``*Prompt*``/``SystemMessage`` call), or
it reads like prose (three different common English words; interpolated: five words, two), or
it labels a volatile interpolation as now ("Current date: " + …).

It does NOT take examples (``example=…``, ``TEST_PROMPT``) or arguments of logging, printing,
exceptions, regexes, date parsing, paths, env look-ups or string methods (:func:`skipped_call`).
"""

from __future__ import annotations

import re

from analyzer.detection.context import MAX_LABEL, word_classes

PROMPT_NAME = re.compile(
    r"(?i)(?:prompt|system|instruction|template|persona|preamble|content|context|guideline|rules|"
    r"directive|description|greeting|policy|few_?shot|backstory|goal|intro|tmpl|tpl)"
)
_SAMPLE_NAME = re.compile(r"(?i)(?:^|[^a-z])(?:examples?|samples?|test|fixture|mock|fake|dummy)(?:[^a-z]|$)")
_SKIP_CALL = re.compile(
    r"(?:^|\.)(?:print|debug|info|warning|warn|error|exception|critical|fatal|trace|log|compile|match|search|sub|subn|fullmatch"
    r"|findall|finditer|split|strptime|strftime|parse|execute|executemany|executescript|open|getenv|get|join|exists|startswith"
    r"|endswith|replace|replaceAll|encode|decode|loads|dumps|stringify|require|RegExp|querySelector|querySelectorAll"
    r"|includes|indexOf|lastIndexOf|contains|find|rfind|index|count|has|test"  # a lookup: is "{{date}}" in it?
    r"|getElementById|addEventListener|fetch|setHeader|set|format_exc|assert\w*|fail|skip|xfail|raises|warns|Error|Exception"
    r"|\w+Error|\w+Exception)$"
)
#: a key or a heading ends the literal text before a value ("ID: ", "# Git Status\n")
_KEY_END = re.compile(r"(?:[^\W\d_]{2,}[ \t]*[:：]|^#{1,4}[ \t]+[^\n]+\n)[ \t]*$", re.MULTILINE)
#: words in lower or sentence case: SQL and constants are upper case
_WORD = re.compile(r"\b[A-Z]?[a-z]+\b")
_ANY_WORD = re.compile(r"[^\W\d_]{2,}")
_COMMON = frozenset(
    "the a an you your to of and is are be in for with on this that it as if or not do use will can must should "
    "when what which who how they them their we our from by at have has was were never always only all any "
    "into about please user assistant answer respond reply help question task".split()
)  # and prompts' own words


#: a key right before a value: "Date: ", "\"now\": \"", "time="
KEYED = re.compile(r"[^\W\d_]{2,}[\"'”]?[ \t]*[:：=][ \t]*[\"'“]?$")


def skipped_call(dotted: str) -> bool:
    """Arguments of this call are not prompts (``log.info``, ``console.error``, ``re.compile`` …)."""
    return bool(_SKIP_CALL.search(dotted)) or dotted.startswith(
        ("console.", "logger.", "logging.", "log.", "os.path.", "path.")
    )


def prompt_named(name: str) -> bool:
    return bool(name and PROMPT_NAME.search(name))


def _common(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} & _COMMON


def prose(text: str) -> bool:
    return len(_common(text)) >= 3


_SLOT_SIGNS = ("{", "%(", "<%")
#: what an e-mail or web page template says
_MAIL = re.compile(r"(?i)<(?:html|body|p|div|br|table)\b|\bdear\b|\bunsubscribe\b|^subject:|\bkind regards\b")


def slotted(literal_text: str) -> bool:
    """A short literal of words with a template slot volatile by name ("Current time is {{now}}"):
    a prompt template whatever the code calls it."""
    if len(literal_text) > 4000 or not any(s in literal_text for s in _SLOT_SIGNS):
        return False
    if _MAIL.search(literal_text):
        return False  # an e-mail or a page filled by the same engine: not sent to a model
    if len(_ANY_WORD.findall(literal_text)) < 3:
        return False
    from analyzer.detect import find_volatile

    return any(v.kind == "placeholder" and v.reason.startswith("named") for v in find_volatile(literal_text))


def is_prompt(
    literal_text: str, name: str, interpolated: bool, volatile: bool = False, keyed: bool = False
) -> bool:
    """``volatile``: one of its interpolations is volatile by what it calls or names; ``keyed``: one
    such interpolation stands right after a key (``"zonedDateTime": "$now"``, ``Time: ${t}``)."""
    if name and _SAMPLE_NAME.search(name):
        return False  # example=…, sample_prompt, TEST_PROMPT: a prompt shown, not sent
    if keyed and len(_ANY_WORD.findall(literal_text)) >= 3:
        return True  # a record of labelled values for the model to read
    if volatile and ("now" in word_classes(literal_text[-MAX_LABEL:]) or _KEY_END.search(literal_text)):
        return True  # 'Current date: ' + now.strftime(…), f'- CONVERSATION_ID: {cid}': a line for a prompt
    if prompt_named(name):
        return bool(_ANY_WORD.search(literal_text)) or interpolated
    if prose(literal_text):
        return True
    return interpolated and len(_ANY_WORD.findall(literal_text)) >= 5 and len(_common(literal_text)) >= 2
