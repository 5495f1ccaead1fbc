"""The working copy's state where no git block heading says so: labelled slots and status lines.

:func:`labelled_slot` reads a slot under a label that names git itself: ``Git commit: {{commit}}``
(the checked-out commit, per request) and ``Git user: {{user}}`` / ``Git email: {{email}}`` (the
identity of whoever runs the tool, per user). :func:`status_lines` finds the value lines under a
``Status:`` / ``Recent commits:`` / ``Changes:`` line of a text that says it shows the git status
("This is the git status at the start of the conversation"): rendered per repository and moment,
even when extracted as ``(clean)``.

It does NOT judge (:mod:`.judge` drops examples and code), nor read ``gitStatus:`` blocks (:mod:`.session`).
"""

from __future__ import annotations

import re

from analyzer.detection import names
from analyzer.detection.candidate import MEDIUM, Candidate

#: a label's key that names git itself ("Git commit:", "git user.email =")
_GIT_KEY = re.compile(r"(?i)\bgit\b[\w .-]{0,24}?[:=]?[ \t]*$")
_COMMIT = {"commit", "sha", "hash", "head", "revision", "rev"}
_IDENTITY = {"user", "email", "mail", "author", "name", "username", "committer"}
#: a text that says it shows the working copy's status
_INTRO = re.compile(
    r"(?i)\b(?:git status|status of the (?:git )?repo(?:sitory)?|git snapshot|repository status)\b"
)
#: a header line over rendered status lines
_HEADER = re.compile(
    r"(?im)^[ \t]*(?:status|git status|recent commits|changes|uncommitted changes|modified files)[ \t]*:[ \t]*$"
)
_INTRO_REACH = 600


def labelled_slot(expr: str, label: str) -> str | None:
    """Why a slot under a git label (``Git commit:``, ``Git email:``) is per request or per user, or None."""
    if not _GIT_KEY.search(label[-40:]):
        return None
    ws = set(names.words(expr))
    if not ws:
        return None
    if ws <= _COMMIT | {"current", "last", "latest"} and ws & _COMMIT:
        return "the checked-out commit, read from the repository per request"
    if ws <= _IDENTITY | {"git"}:
        return "the git identity of whoever runs it, per user"
    return None


def status_lines(text: str, low: str, out: list[Candidate]) -> None:
    """Each status header after a git-status intro with its value lines (to the next blank line), as
    one block: a slot among them is the block's (``Recent commits:`` over ``${EXPR_3}``)."""
    if "status" not in low:
        return
    for m in _HEADER.finditer(text):
        intro = _INTRO.search(text, max(0, m.start() - _INTRO_REACH), m.start())
        if not intro:
            continue
        a = m.end() + 1
        if a >= len(text) or text[a] in "\n\r":
            continue
        b = text.find("\n\n", a)
        b = len(text) if b < 0 else b
        body = text[a:b].rstrip()
        if body and len(body) <= 2000 and not any(_prose(ln) for ln in body.split("\n")):
            start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
            out.append(Candidate("state", start, a + len(body), MEDIUM, "block", "git status"))


def _prose(line: str) -> bool:
    """A sentence, not a status or log line."""
    if _LOG_LINE.match(line):
        return False
    n = len(line.split())
    return n >= 12 or (n >= 6 and line.rstrip().endswith((".", "!", "?")))


#: a commit line or a porcelain status line ("a1b2c3d Fix …", " M src/app.py")
_LOG_LINE = re.compile(r"[ \t]*(?:[0-9a-f]{7,40}\b|[MADRCU?!]{1,2}[ \t]+\S)")
