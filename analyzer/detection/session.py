"""Session state rendered into a prompt under weak labels: counts, memory, state JSON, env blocks.

:func:`quantity` reads a number that a label makes a per-request reading ("Tokens used: 48,213",
"18,412 / 200K tokens used", "Free memory: 3.2 GB", ``<budget:token_budget>…``, coordinates);
:func:`state_json` a JSON object after a state label ("Current state: {…}"); :func:`blocks` an
agent's environment or git-status snapshot (``<env>…</env>``, ``gitStatus: …``, a
``# Environment`` section of key: value lines) as one span from its header to its end.

It does NOT judge (:mod:`.judge` drops code and examples) and reads only near its anchors.
"""

from __future__ import annotations

import re

from analyzer.detection import whereabouts
from analyzer.detection.candidate import HIGH, MEDIUM, Candidate
from analyzer.detection.prefilters import ascii_words
from analyzer.detection.reading_keys import _DIGIT, _READING_KEYS, KEY_CHAIN_REACH, _reading_keys  # noqa: F401 (tests)
from analyzer.detection.reading_labels import READING_BEFORE, label_before  # noqa: F401 (read here by tests)
from analyzer.detection.reading_labels import SCOPE as _SCOPE

#: what may follow the first digits of a quantity ("48,213", "3.2 GB", "16GB", "1000000<")
QUANTITY_NEXT = frozenset(",.<GMKTgmk%")
_BEFORE_KEYS = re.compile(
    r"(?i)tok|mem|ram|disk|swap|stor|space|credit|quota|request|budget|coord|lat|lon|lng|gps|<|cost|spen|charges"
    r"|balance|cpu|gpu|load"
)
_AFTER_KEYS = re.compile(r"(?i)token|free|avail")
#: the literal words of the two patterns above, for a cheap test before the regex (see :func:`_keyed`)
_BEFORE_WORDS = tuple(
    "tok mem ram disk swap stor space credit quota request budget coord lat lon lng gps < cost spen charges".split()
) + ("balance", "cpu", "gpu", "load")
_AFTER_WORDS = ("token", "free", "avail")
_NUMBER = re.compile(r"\d{1,3}(?:[,_ ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_UNIT = re.compile(r"\s?(?:[KMGT]i?B\b|[kmg]b\b|[KkMm]\b|%)")
READING_AFTER = re.compile(
    r"(?i)(?:\s*/\s*[\d.,_]+\s*[KkMm]?)?\s*(?:tokens?\s+(?:used|left|remaining)|(?:[KMGT]i?B\s+)?(?:free|available)\b)"
)
STATE_LABEL = re.compile(
    r"(?i)(?:\b(?:current|global|session|app|application|agent|game|world|conversation|workflow|runtime)"
    r"[ _-]?state|^\s*state|<(?:[\w-]*_)?state>)\s*[:=]?\s*$"
)
_BLOCK_NAMES = (
    "env environment environment_details environment_info env_info system_info git_status gitstatus "
    "workspace_info system_state session_state"
).split()
_BLOCK_TAG = re.compile(r"[ \t]*<(?P<tag>[\w-]+)(?:\s+(?:name|type|id)=[\"'](?P<name>[\w-]+)[\"'])?\s*>")
_BLOCK_HEAD = re.compile(
    r"(?im)^[ \t]*(?:(?P<hashes>#{1,4})[ \t]*)?(?P<name>gitstatus|git status|env|environment(?: details| information| info)?"
    r"|system information|current environment)[ \t]*(?P<colon>:)?[^\n]*$"
)
_KEY_VALUE = re.compile(r"^[ \t]*(?:[-*][ \t]+)?[A-Za-z][\w ()./'-]{0,48}:[ \t]*\S")
_GIT_LINE = re.compile(
    r"(?im)^[ \t]*(?:[MADRCU?!]{1,2}[ \t]+\S|[0-9a-f]{7,40}[ \t]+\S|(?:current |main |base )?branch\b|status:"
    r"|recent commits|(?:changes|untracked|staged|modified|deleted|new file)\b|on branch\b|your branch\b)"
)


def quantity(text: str, s: int, e: int, out: list[Candidate]) -> int:
    """A count or amount read per request at the digits text[s:]; returns where it ends (``s`` when none)."""
    if text[e : e + 1] == "." and (end := whereabouts.coordinates(text, s, out)) > s:
        return end  # "Location: 52.5200, 13.4050"
    m = _NUMBER.match(text, s)
    if not m or text[max(0, s - 2) : s].rstrip().endswith("/"):
        return s  # "/ 200K": the total a count is read against
    end = m.end()
    unit = _UNIT.match(text, end)
    if unit:
        end = unit.end()
    lo = max(text.rfind("\n", max(0, s - 64), s) + 1, s - 48)  # its line, at most 48 back
    # a reading needs both a label (before or after it) and a key word: both pure tests, so the
    # one that rejects most numbers for least (the label's words first skip its regex) goes first
    if not (label_before(text, lo, s) or READING_AFTER.match(text, end)):
        return s
    if not (
        _keyed(text, lo, s, _BEFORE_KEYS, _BEFORE_WORDS)
        or _keyed(text, end, end + 40, _AFTER_KEYS, _AFTER_WORDS)
    ):
        return s  # no word a reading is labelled with: a price, a version, a size
    out.append(Candidate("state", s, end, HIGH, "quantity"))
    return end


def _keyed(text: str, lo: int, hi: int, rx: re.Pattern, words: tuple[str, ...]) -> bool:
    """``rx`` (an alternation of ``words``, case-insensitive) occurs in text[lo:hi]. An ASCII
    window lowered is exact, so the words in it answer, no regex; any other window (where
    case-insensitive matching can pair a non-ASCII letter with an ASCII one) goes to the regex."""
    got = ascii_words(text, lo, hi, words)
    return bool(rx.search(text, lo, hi)) if got is None else got


_READING = re.compile(
    r"(?i)(?:\b(?:remaining|used|left|consumed)\s+tokens?|\btokens?\s+(?:used|left|remaining|consumed|so far)"
    r"|\btoken\s+(?:usage|count)|\b(?:free|available|used)\s+(?:memory|ram|disk|storage)|\bbattery(?:\s+level)?"
    r"|\b(?:credits?|quota|requests?)\s+(?:left|remaining|used)|\b(?:token\s+)?budget\s+(?:remaining|left|used)"
    r"|\bcontext(?:\s+window)?\s+(?:used|usage)|\b(?:steps?|turns?|(?:tool\s+)?calls?|iterations?|attempts?|messages?"
    r"|retries)\s+(?:remaining|left)(?:\s+(?:in\s+)?this\s+\w+)?)"
    + _SCOPE
    + r"\s*[:=]?\s*[`*_]{0,2}(?P<n>\d[\d,_]*(?:\.\d+)?)"
    r"|(?:\b(?:currently|you are|now)\s+on\s+|\bthis is\s+)(?:iteration|attempt|turn|round|step)\s+(?P<i>\d+)"
    r"|\b(?:iteration|attempt)\s*[:#]?\s*(?P<j>\d+)\s*(?:/|of)\s*\d+"
    r"|\b(?:you have|with|only)\s+[`*_]{0,2}(?P<k>\d[\d,_]*)\s+(?:more\s+)?(?:steps?|turns?|(?:tool\s+)?calls?|iterations?"
    r"|attempts?|messages?|requests?|tokens?|retries)\s+(?:remaining|left)\b"
    r"|\b(?:you have|you've|you)\s+used\s+(?P<u>\d[\d,_]*)\s+(?:of\s+(?:your\s+)?[\d,_.]+\s?[KkMm]?\s+)?"
    r"(?:tokens?|credits?|requests?|messages?|calls?|steps?)\b"
)
#: a literal each :data:`_READING` alternative holds, lowered: an ASCII window without any has no match
_READING_WORDS = tuple("token memory ram disk storage battery left remaining used usage iteration".split())
_READING_WORDS += ("attempt", "turn", "round", "step")


def readings(text: str, low: str, out: list[Candidate]) -> None:
    """Numbers under a strong reading label ("Remaining tokens: 151787", "on iteration 3 of 10"),
    found at the label's words: a bare number is no anchor of the scan."""
    seen: set[int] = set()
    for k, key_end in _reading_keys(low, text):
        lo, hi = max(0, k - 24), min(len(text), k + 64)
        if ascii_words(text, lo, hi, _READING_WORDS) is False:
            continue  # none of the words any match holds
        for m in _READING.finditer(text, lo, hi):
            g = next(g for g in "nijku" if m.group(g))
            a, b = m.span(g)
            if a not in seen and m.start() <= key_end:
                seen.add(a)
                b = a + len(text[a:b].rstrip(",._"))
                unit = _UNIT.match(text, b)
                out.append(Candidate("state", a, unit.end() if unit else b, HIGH, "quantity"))


def state_json(text: str, at: int, out: list[Candidate]) -> int:
    """A JSON object at text[at] ("{") under a state label; returns where it ends (``at`` when none)."""
    k = at - 1
    while k >= 0 and text[k] in " \t\n`":
        k -= 1
    if k < 0 or text[k] not in ":=>":
        return at
    line = max(text.rfind("\n", max(0, k - 60), k) + 1, k - 60)  # at most 60 back, line or not
    if not STATE_LABEL.search(text, line, k + 1):
        return at
    end = _closing(text, at)
    if end < 0:
        return at
    out.append(Candidate("state", at, end, HIGH, "state-json"))
    return end


def _closing(text: str, at: int, limit: int = 8000) -> int:
    depth, k, stop, quoted = 0, at, min(len(text), at + limit), False
    while k < stop:
        ch = text[k]
        if quoted:
            if ch == "\\":
                k += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return -1


def blocks(text: str, low: str, out: list[Candidate]) -> int:
    """Environment and git-status blocks, each one candidate from its header to its end; returns
    where the first "git " is (-1: none), for :func:`.gitstate.find` (every "git" is visited here)."""
    done = git = -1
    for key in ("env", "git"):
        k = low.find(key)
        while k >= 0:
            if git < 0 and key == "git" and low.startswith(" ", k + 3):
                git = k
            if k >= done:
                span = _block_at(text, low, k)
                if span:
                    out.append(Candidate("state", span[0], span[1], MEDIUM, "block", span[2]))
                    done = span[1]
            k = low.find(key, k + 3)
    return git


def _block_at(text: str, low: str, k: int) -> tuple[int, int, str] | None:
    ls = text.rfind("\n", 0, k) + 1
    tag = _BLOCK_TAG.match(text, ls) if "<" in text[ls:k] else None
    if tag and k < tag.end():
        name = (tag.group("name") or tag.group("tag")).lower()
        if name not in _BLOCK_NAMES:
            return None
        close = low.find(f"</{tag.group('tag').lower()}>", tag.end(), tag.end() + 20000)
        body = text[tag.end() : close]
        git = name.startswith("git") and len(_GIT_LINE.findall(body)) >= 2
        if close < 0 or not (git or _has_values(body) or body.count("\n#") >= 3):
            return None
        return ls, close + len(tag.group("tag")) + 3, tag.group(0).strip()
    head = _BLOCK_HEAD.match(text, ls)
    if not head or head.start("name") != k:
        return None
    git = head.group("name").lower().startswith("git")
    if not (head.group("hashes") or head.group("colon")):
        return None
    end = _block_end(text, head.end(), git, head.group("hashes"))
    body = text[head.end() : end]
    if not _has_values(body) and not (git and _GIT_LINE.search(body)):
        return None
    return ls, end, head.group(0).strip()


def _block_end(text: str, at: int, git: bool, hashes: str | None) -> int:
    """Where a header's block ends: a heading's at the next heading of its level or above; a
    ``name:`` block's at a blank line followed by a line that is not ``key: value`` (a git
    block goes on over its branch, status and commit lines)."""
    end, pos, limit = at, at, min(len(text), at + 4000)
    blank = False
    while pos < limit:
        nl = text.find("\n", pos + 1, limit)
        nl = limit if nl < 0 else nl
        line = text[pos + 1 : nl]
        stripped = line.strip()
        if not stripped:
            blank = True
        else:
            level = len(stripped) - len(stripped.lstrip("#"))
            if hashes and 0 < level <= len(hashes):
                break
            if not hashes and blank and not _KEY_VALUE.match(line) and not (git and _GIT_LINE.match(line)):
                break
            blank = False
            end = nl
        pos = nl
    return end


def _has_values(body: str) -> bool:
    """Mostly short ``key: value`` lines: a rendered snapshot, not a paragraph about one."""
    lines = [ln for ln in body.split("\n") if ln.strip()]
    if not lines:
        return False
    pairs = sum(1 for ln in lines if _KEY_VALUE.match(ln) and len(ln) <= 160)
    prose = sum(1 for ln in lines if len(ln.split()) >= 12)
    return pairs >= 2 and prose <= max(1, len(lines) // 4)
