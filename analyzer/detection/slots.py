"""Template slots that have no sigil the scan anchors at: blanks and Jinja concatenations.

:func:`blanks` finds a collector's blank standing for a value (``_____``, ``_____@gmail.com``,
``[Server Name]``), judged like a slot of no name (its label decides); :func:`concatenated` the
operands of ``+`` inside a Jinja statement (``{% set s = "The date is " + today + "." %}``),
judged by name like any slot.

It does NOT judge (:mod:`.judge`) and reads only near its marks.
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate
from analyzer.detection.names import judge_expression
from analyzer.detection.prefilters import find_led

_BLANK = re.compile(r"_{3,}(?:@[\w-]+(?:\.[\w-]+)+)?")
_BRACKET = re.compile(r"\[[A-Z][a-z]+(?: [A-Z][a-z]+){0,3}\](?![(\[:])")
_OPERAND = re.compile(
    r"(?:[\"']\s*\+\s*|\+\s*)(?P<x>[A-Za-z_]\w*(?:\.\w+)*(?:\(\))?)(?=\s*(?:\+|-?%\}|-?\}\}|\)))"
)


_USER_LABEL = re.compile(
    r"(?i)\buser(?:'s|s)?\s+(?:name|e-?mail(?:\s+address)?|location|city|country|time\s?zone|phone(?:\s+number)?"
    r"|address|nickname)\s*(?:is\s+|:\s*|=\s*)"
    # "the user is based in …", "User has shared their location … and they are located in …"
    r"|\buser\b(?!['’]s)(?:\s+is|[^.\n]{0,80}?\b(?:they|he|she)\s+(?:is|are))\s+(?:currently\s+)?(?:based|located) in"
    r" (?:country |city )?"
    # "Current location: Lisbon, Portugal", "the current location is Osaka": where the user (or a game) is now
    r"|\bcurrent\s+(?:location|city|country)\s*(?:is\s+|:\s*|=\s*)"
)
#: the name of the person served by a possessive, read in lower case ("the customer's name is ")
_SERVED_NAME = re.compile(
    r"[\s\S]*?\b(?P<who>(?:user|customer|client|patient|guest|caller|visitor|member|student)['’](?P<s>s))"
    r" name(?: is |:[ \t]*| = )"
)
#: nothing but the line's end after a name under a colon
_LINE_END = re.compile(r"[ \t]*(?:\n|\Z)")
#: a person's name: one to three capitalised words ("Ana", "Ana Silva")
_PERSON = re.compile(r"[A-Z][\w'’-]*(?:[ \t][A-Z][\w'’-]*){0,2}\b")
#: a place after "located in": its parts ("Farnborough, England, United Kingdom")
_PLACE = re.compile(
    r"[A-Z][\w'’-]+(?:[ \t][A-Z][\w'’-]+){0,2}(?:,[ \t]+[A-Z][\w'’-]+(?:[ \t][A-Z][\w'’-]+){0,2}){0,3}"
)
_USER_VALUE = re.compile(
    r"(?:[A-Z0-9][\w@+\-/]*|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)(?:[ .][A-Z0-9][\w@+\-/]*){0,3}(?=[,;)]|\.(?:\s|$)|[ \t]*(?:\n|$))"
)


def user_values(text: str, low: str, out: list[Candidate], current: list[int] | None = None) -> list[int]:
    """A value rendered under a label that says it is the current user's ("The user's name is
    Ana", "User's timezone: Europe/Warsaw", "the user is based in country US", "Current location: Lisbon");
    ``current``: where each "current" is, if known (those before a space are every "current "). Returns
    where each "user" is (for :func:`.whereabouts.user_place`: one scan for both)."""
    users = []
    for key in ("user", "current "):  # each of the label's alternatives starts with one
        if key == "current " and current is not None:
            at = iter([k for k in current if low.startswith(" ", k + 7)] + [-1])
            k = next(at)
        else:
            at = None
            k = low.find(key)
        while k >= 0:
            if key == "user":
                users.append(k)
            m = _USER_LABEL.match(text, k)
            if m:
                place = m.group(0).endswith(" in ") or key == "current "
                v = (_PLACE if place else _USER_VALUE).match(text, m.end())
                if v:
                    out.append(Candidate("state", v.start(), v.end(), HIGH, "user", m.group(0).strip()))
            k = low.find(key, k + 4) if at is None else next(at)  # no "current " overlaps another
    k = low.find("s name")
    while k >= 0:  # "The customer's name is Ana": the person served, by a possessive
        m = _SERVED_NAME.match(low, max(0, k - 12), k + 16)
        v = _PERSON.match(text, m.end()) if m and m.end("s") == k + 1 else None
        if v and m.group(0).endswith(":") or v and ":" in m.group(0)[-3:]:
            v = v if _LINE_END.match(text, v.end()) else None  # "…name: Ana", not "…name: Ask politely."
        if v:
            out.append(
                Candidate("state", v.start(), v.end(), HIGH, "user", text[m.start("who") : m.end()].strip())
            )
        k = low.find("s name", k + 6)
    return users


def blanks(text: str, out: list[Candidate]) -> None:
    k = find_led(text, "___")
    while k >= 0:
        m = _BLANK.match(text, k)
        if text[k - 1 : k].isalnum():
            k = find_led(text, "___", start=m.end())
            continue
        out.append(Candidate("placeholder", k, m.end(), HIGH, "", "blank"))
        k = find_led(text, "___", start=m.end())
    k = text.find("[")
    while k >= 0:
        m = _BRACKET.match(text, k)
        if m and not _quoted_reply(text, k):
            out.append(Candidate("placeholder", k, m.end(), HIGH, "", "blank"))
        k = text.find("[", k + 1)


def _quoted_reply(text: str, at: int) -> bool:
    """The blank at ``at`` is in a quoted or block-quoted line ("Tu cita del [fecha] …", "> Hola
    [Nombre]"): a reply written for the model to fill from the conversation, not a rendered value."""
    ls = text.rfind("\n", 0, at) + 1
    before = text[ls:at]
    if before.lstrip(" \t-*").startswith(">"):
        return True
    le = text.find("\n", at)
    after = text[at : len(text) if le < 0 else le]
    return (before.count('"') % 2 == 1 and '"' in after) or before.count("“") > before.count("”")


def concatenated(text: str, out: list[Candidate]) -> None:
    k = find_led(text, "{%")
    while k >= 0:
        end = find_led(text, "%}", start=k)
        if end < 0:
            return
        if "+" in text[k:end]:
            for m in _OPERAND.finditer(text, k, end + 2):
                v = judge_expression(m.group("x"))
                if v:
                    out.append(
                        Candidate("placeholder", m.start("x"), m.end("x"), v.severity, v.reason, m.group("x"))
                    )
        k = find_led(text, "{%", start=end)


#: the first words of a Go, Jinja or Liquid template action that is control, not a value
_CONTROL = frozenset("if else end range with define template block elif endif for endfor unless each".split())


def control(expr: str | None) -> bool:
    """``{{- if .Memory}}``, ``{{range .Items}}``, ``{{end}}``, ``{{~#each xs~}}``: a template action, not a slot."""
    return bool(expr) and expr.lstrip("-~ ").lstrip("#/").split(" ", 1)[0].rstrip("~") in _CONTROL
