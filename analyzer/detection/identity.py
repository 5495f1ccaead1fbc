"""Who is signed in, rendered into a sentence: "I'm logged in to Docker Hub as Ana", "You are
signed in as ana@example.org".

:func:`find` reads the name (one to three capitalised words), e-mail or @handle right after
"logged in as" / "signed in as" when "you" (or "I'm", "the user is") stands before it in the same
clause and the value ends its clause: the account of whoever sends the request, per user.

It does NOT read a role ("logged in as an administrator", "as Administrator"), names after
"talking to" or "helping" (a persona or a group as often as the user), nor judge (:mod:`.judge`
drops examples).
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import MEDIUM, Candidate

#: the phrase, with who is served before it in the clause
_PHRASE = re.compile(
    r"(?i)\b(?:you(?:'re| are)?|i'm|i am|the user is|user is)\b[^.\n;:]{0,40}?"
    r"\b(?:logged in|signed in)(?: (?:to|on|at) [^.\n;:]{1,30}?)? as[ \t]+"
)
#: the value: an e-mail, an @handle, or one to three capitalised words (a name)
_VALUE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|@[\w-]{2,40}(?:\.[\w-]+)*|(?-i:[A-ZÀ-Ý][\w'’-]+(?:[ \t]+[A-ZÀ-Ý][\w'’-]+){0,2})"
)
#: what may follow the value: the end of its clause
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;!?)(]|$|\n|[ \t]+(?:and|but|on|today|now)\b)")
#: capitalised words that name a role, not a person
_ROLES = frozenset(
    "The A An This Your Our Their Administrator Admin Root Guest Owner Moderator Support Customer User Member".split()
)


def _logged_or_signed_in(low: str) -> bool:
    """``"logged in" in low or "signed in" in low``, in one scan for their common "ed in" (rare in
    prose), each hit read back for "logg" or "sign"."""
    k = low.find("ed in")
    while k >= 0:
        if k >= 4 and low.startswith(("logg", "sign"), k - 4):
            return True
        k = low.find("ed in", k + 1)
    return False


def find(text: str, low: str, out: list[Candidate]) -> None:
    """The signed-in person's name, e-mail or handle after "logged in as" / "signed in as"."""
    if not _logged_or_signed_in(low):
        return
    for m in _PHRASE.finditer(text):
        v = _VALUE.match(text, m.end())
        if v is None or v.group(0).split()[0] in _ROLES or not _CLAUSE_END.match(text, v.end()):
            continue
        label = text[m.start() : m.end()].strip()
        out.append(Candidate("state", v.start(), v.end(), MEDIUM, "user", label))
