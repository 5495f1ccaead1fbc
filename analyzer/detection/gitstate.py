"""The working copy's state where no git block heading says so: labelled slots and status lines.

:func:`labelled_slot` reads a slot under a label that names git itself: ``Git commit: {{commit}}``
(the checked-out commit, per request) and ``Git user: {{user}}`` / ``Git email: {{email}}`` (the
identity of whoever runs the tool, per user). :func:`status_lines` finds the value lines under a
``Status:`` / ``Recent commits:`` / ``Changes:`` line of a text that says it shows the git status
("This is the git status at the start of the conversation"): rendered per repository and moment,
even when extracted as ``(clean)``.

It does NOT judge (:mod:`.judge` drops examples and code), nor read ``gitStatus:`` blocks (:mod:`.session`).
:func:`branches` reads the checked-out branch's name after a label that says so ("Current branch:
main", "You are on branch feature/x"); a default or base branch is the repository's setting.
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
    r"(?i)\b(?:git status|status of the (?:git )?repo(?:sitory)?|git snapshot|repository status"
    r"|git (?:information|info|context|state))\b"
)
#: a header line over rendered status lines
_HEADER = re.compile(
    r"(?im)^[ \t]*(?:status|git status|recent commits|changes|uncommitted changes|modified files)[ \t]*:[ \t]*$"
)
_INTRO_REACH = 600


def _intro_words(low: str, k: int = 0, git: int = 0) -> bool:
    """The literal words of an :data:`_INTRO` alternative are in ``low`` ("git status", "status of
    the", "repository status" read at each "status", then "git snapshot", "git info" …); ``k`` and
    ``git``: no "status" before ``k``, no "git " before ``git`` (-1: none at all)."""
    k = low.find("status", k)
    while k >= 0:
        if (
            (k >= 4 and low.startswith("git ", k - 4))
            or low.startswith("status of the", k)
            or (k >= 11 and low.startswith("repository ", k - 11))
        ):
            return True
        k = low.find("status", k + 6)
    k = low.find("git ", git) if git >= 0 else -1
    while k >= 0 and not low.startswith(("git snapshot", "git info", "git context", "git state"), k):
        k = low.find("git ", k + 4)
    return k >= 0


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


#: a label naming the checked-out branch, and the name after it
_BRANCH = re.compile(
    r"(?im)(?:\b(?:current|active|checked[- ]out|working|git)\s+branch\b(?:\s+name)?(?:[ \t]*[:：=]|\s+is\b)"
    r"|\b(?:you are|you're|currently|we are|we're)\s+on\s+(?:the\s+)?(?:git\s+)?branch\b|^[ \t]*on branch\b)"
    r"[ \t]*[`'\"*]*(?P<v>[A-Za-z0-9][\w./-]*\w|[A-Za-z0-9])[`'\"*]*(?=[ \t]*(?:[.,;)]|$))"
)
_NOT_A_BRANCH = frozenset(
    "name is the a an and or you of to in protected unknown none null true false n/a na detached clean".split()
)
#: the words one of which stands right before "branch" in every :data:`_BRANCH` form
_BRANCH_LEADS = ("current", "active", "checked", "working", "git", " on", "\ton")


#: a ``Git commit: …`` / ``Git user: …`` / ``Git email: …`` line and its value
_GIT_LINE = re.compile(
    r"(?im)^[ \t]*(?:[-*•][ \t]+)?(?:\*\*)?git[ \t]+(?P<key>commit|sha|head|revision|user(?:\.name)?|user\.email"
    r"|e-?mail|author|name)(?:\*\*)?[ \t]*[:=][ \t]*[`'\"]?(?P<v>[^\n`'\"{}$]{1,80}?)[`'\"]?[ \t]*$"
)
#: what a commit is (hex) and what an identity is (an e-mail, a name, maybe with its e-mail, a handle)
_COMMIT_VALUE = re.compile(r"[0-9a-fA-F]{5,40}")
_IDENTITY_VALUE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[A-Z][\w'’-]*(?: [A-Z][\w'’-]*){0,2}(?: <[^<>\s]+@[^<>\s]+>)?|[a-z0-9][\w.-]{1,30}"
)


def find(text: str, low: str, out: list[Candidate], git: int | None = None) -> None:
    """The checked-out branch (:func:`branches`), git identity and commit lines (:func:`git_lines`)
    and status blocks (:func:`status_lines`); ``git``: where the first "git " is, when known."""
    branches(text, low, out)  # each finds its first word once: no ``in`` test before the same scan
    git = low.find("git ") if git is None else git
    if git >= 0:
        git_lines(text, low, out, git)
    status_lines(text, low, out, git)
    commit_logs(text, low, out)


#: a header over a log of commits ("Recent commits:", "Latest commits (git log --oneline):")
_LOG_HEADER = re.compile(
    r"(?im)[ \t]*(?:[-*#]+[ \t]*)?(?:\*\*)?(?:recent|latest|last)[ \t]+commits\b[^\n:]{0,30}:(?:\*\*)?[ \t\r]*$"
)
_HASH_LINE = re.compile(r"[ \t]*(?:[-*][ \t]+)?[0-9a-f]{7,40}[ \t]+\S")


def commit_logs(text: str, low: str, out: list[Candidate]) -> None:
    """A ``Recent commits:`` header over lines that open with a commit hash: the repository's log
    now, one block to the next blank line (no intro needed: the hashes say what it is)."""
    k = low.find("commits")
    while k >= 0:
        ls = text.rfind("\n", 0, k) + 1
        m = _LOG_HEADER.match(text, ls)
        a = m.end() + 1 if m else -1
        if m and _HASH_LINE.match(text, a):
            b = text.find("\n\n", a)
            b = len(text) if b < 0 else b
            start = ls + len(m.group(0)) - len(m.group(0).lstrip())
            out.append(Candidate("state", start, a + len(text[a:b].rstrip()), MEDIUM, "block", "git log"))
        k = low.find("commits", k + 7)


def git_lines(text: str, low: str, out: list[Candidate], k: int = 0) -> None:
    """The value of a ``Git commit:`` line (the checked-out commit) or of a ``Git user:`` /
    ``Git email:`` line (whoever runs the tool), found at each "git " (the first at or after ``k``)."""
    k = low.find("git ", k)
    while k >= 0:
        ls = text.rfind("\n", 0, k) + 1
        m = _GIT_LINE.match(text, ls)
        if m and k < m.start("key"):  # this "git " is the line's label
            a, b = m.span("v")
            key = m.group("key").lower()
            shape = _COMMIT_VALUE if key in ("commit", "sha", "head", "revision") else _IDENTITY_VALUE
            if shape.fullmatch(text, a, b):
                out.append(Candidate("state", a, b, MEDIUM, "block", f"git {key}"))
        le = low.find("\n", k)
        k = low.find("git ", k + 4) if le < 0 else low.find("git ", le)  # one look per line


def branches(text: str, low: str, out: list[Candidate]) -> None:
    """The branch name after a label naming the checked-out branch, found at each "branch"."""
    seen = -1
    k = low.find("branch")
    while k >= 0:
        lead = low[max(0, k - 24) : k]
        if not any(w in lead for w in _BRANCH_LEADS) and not lead.endswith("on "):
            k = low.find("branch", k + 6)
            continue
        for m in _BRANCH.finditer(text, max(0, k - 40), min(len(text), k + 80)):
            a, b = m.span("v")
            if a > seen and m.start() <= k and text[a:b].lower() not in _NOT_A_BRANCH:
                seen = a
                out.append(Candidate("state", a, b, MEDIUM, "block", "git branch"))
        k = low.find("branch", k + 6)


def status_lines(text: str, low: str, out: list[Candidate], git: int = 0) -> None:
    """Each status header after a git-status intro with its value lines (to the next blank line), as
    one block: a slot among them is the block's (``Recent commits:`` over ``${EXPR_3}``). ``git``: no
    "git " before it (-1: none)."""
    status = low.find("status")
    if status < 0:
        return
    if text.isascii() and not _intro_words(low, status, git):
        return  # no intro: lowered ASCII is exact for the case-blind _INTRO
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
