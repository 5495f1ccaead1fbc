"""What a volatile value looks like, found in one pass over the text.

:func:`scan` returns every *candidate* span (clock time, date, UUID, template slot …) with its
kind and shape facts. One regex finds anchors (digit runs that can start a shape, template
sigils ``{ $ % <``), another month names, ``str.find`` the "today is" words and JWTs; each shape
regex is then tried only *at* an anchor, never over the whole text (``prefixgate bench lint``).

It does NOT judge anything (:mod:`.judge`) or read context beyond the shapes' own boundaries.
"""

from __future__ import annotations

import re

from analyzer.detection import (
    dates,
    gitstate,
    given,
    phrases,
    rendered,
    rendered_dates,
    session,
    slots,
    weekdays,
)
from analyzer.detection.candidate import HIGH, LOW, SETTING, STRFTIME, Candidate
from analyzer.detection.ids import EPOCH_MS, JWT, token_ids
from analyzer.detection.loops import loop_at
from analyzer.detection.names import Verdict, is_setting, judge_expression, words
from analyzer.detection.owners import dify_state
from analyzer.detection.prefilters import find_led

__all__ = ["EPOCH_MS", "LOW", "Candidate", "scan"]

ISO_TS = re.compile(
    r"(?<![\d-])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?(?:Z|[+-](?:[01]\d):?[0-5]\d| ?UTC)?(?![\d])"
)
CLOCK = re.compile(
    r"(?<![\d:.+\-−])(?P<hms>(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?)(?:\s?(?:[AaPp]\.[Mm]\.|[AaPp][Mm]\b))?"
    r"(?:\s?(?:(?:UTC|GMT)(?:[+\-−](?:1[0-4]|0?\d)(?::?[0-5]\d)?(?![ \t]*(?:UTC|GMT|[AaPp]\.?[Mm]\b)))?|Z\b|[A-Z]{1,2}[SD]T\b|(?:CET|EET|WET|MSK|HKT|SGT|WIB)\b)"
    r"(?:\s\((?:[A-Z][a-z]+\s){1,4}Time\))?)?(?![\d:])"
)
EPOCH = re.compile(r"(?<!\w)(?<!\d\.)1[0-9]{9}(?:[0-9]{3}|\.[0-9]{1,6})?(?!\w|\.\d)")
ISO_DATE = re.compile(r"(?<![\d.\-/])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\d\-.]\d)")
#: an ISO week ("2025-W17", "2025-W17-4")
ISO_WEEK = re.compile(r"(?<![\d.\-/])(?:19|20)\d\d-W(?:0[1-9]|[1-4]\d|5[0-3])(?:-[1-7])?(?![\w-])")
NUM_DATE = re.compile(
    r"(?<![\d/.\-])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{2}/\d{2}|\d{1,2}\.\d{1,2}\.\d{4}|(?:0?[1-9]|[12]\d|3[01])-(?:0?[1-9]|1[0-2])-(?:19|20)\d\d"
    r"|(?:19|20)\d\d\.(?:0[1-9]|1[0-2])\.(?:0[1-9]|[12]\d|3[01])|(?:19|20)\d\d\. (?:0?[1-9]|1[0-2])\. (?:0?[1-9]|[12]\d|3[01])\.?)(?![\d/\-]|\.\d)"
)
#: "14h05" (French), "14時05分", "下午2点05分", "오후 2시 5분"
OTHER_CLOCK = re.compile(
    r"(?:[01]?\d|2[0-3])(?:h[0-5]\d(?!\w)| h [0-5]\d(?![\w:.,])|\s*[时時点點]\s*[0-5]?\d\s*分(?:\s*[0-5]?\d\s*秒)?|\s*시\s*[0-5]?\d\s*분(?:\s*[0-5]?\d\s*초)?)"
)

_PH = re.compile(
    r"\{\{#(?P<dify>[\w.]{1,80})#\}\}"  # Dify: {{#sys.conversation_id#}}
    r"|\{\{\{?-?\s*(?P<sigil>[#/^&>!]?)\s*(?P<d>[^{}\n]{1,160}?)\s*-?\}?\}\}"  # Jinja, Mustache, Handlebars, Go, Semantic Kernel
    r"|\{%-?\s*(?P<tag>now\b[^%\n]{0,80}?)\s*-?%\}"  # {% now 'utc', '%Y-%m-%d' %} (jinja2-time)
    r"|\{(?P<positional>)\}"  # {} (str.format)
    r"|(?P<strftime>%[aAbBdHIjmMpSyYZ](?:[^%\n]{0,3}%[aAbBdHIjmMpSyYzZ]){1,6})"  # %Y-%m-%d: a strftime format
    r"|\$\{\s*(?P<s>[^{}\n]{1,160}?)\s*\}"  # ${name} (JS, shell, Terraform)
    r"|%\(\s*(?P<p>\w+)\s*\)[sdrif]"  # %(name)s
    r"|<%[=-]?\s*(?P<e>(?:(?!-?%>)[^\n]){1,160}?)\s*-?%>"  # <%= name %> (ERB, EJS)
    r"|(?<![{$])\{(?P<f>[A-Za-z_][\w.]*(?:\[[^\]\n]{1,20}\])*)(?:![rsa])?(?::(?P<spec>%[^{}\n\"']{0,40}|[^{}\s\"'%](?![^{}\n]*[ ,][A-Za-z_]\w*:)(?:[^{}\n\"'%]{0,23}[^{}\s\"'%])?))?\}(?!\})"  # {name}, {now:%H:%M}
)
# One leading character class, so sre skips everything else at C speed; a run of digits is an
# anchor only when it can start a shape: inside a token ("v2", "a1b2", "+1"), followed by one
# (":", "-", "/", a letter, ".5", 年/월), six digits or more, or a year (1000–2999). Bare numbers ("30 days", "$12") are
# skipped in C; a written-out date is anchored at its month name instead, found in the same pass.
_AFTER_ANCHOR = (
    r"(?:(?<=[{$%<])|(?<=[A-Za-z_+/.:\-][0-9])|[0-9]*(?:[A-Za-z_+/:\-%年月년월时時点點시]|[.,][0-9A-Za-z]|(?<=[0-9]{6})"
    r"| (?=h [0-5][0-9]))"  # "15 h 42" (French)
    r"|(?<=[12])(?<![0-9][12])[0-9]{3}(?![0-9]))"
)
#: the anchors (``[0-9{$%<]`` and what may follow) and, in the same pass, what
#: :data:`.phrases._MONTH_RX` finds (a capital and two small letters: never where an anchor starts,
#: so the anchors are those of a pass of their own). An anchor's match may end in a capital
#: (``5Jan``, ``1,Mar``): :func:`scan` reads a month there itself.
_ANCHOR_OR_MONTH = re.compile(
    r"[0-9{$%<JFMASOND](?:(?<=[JFMASOND])(?:an|eb|ar|pr|ay|un|ul|ug|ep|ct|ov|ec)|(?<=[0-9{$%<])"
    + _AFTER_ANCHOR
    + ")"
)
_MONTH_CAPITALS = frozenset("JFMASOND")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/.:-")
_TOKEN_END = re.compile(r"[A-Za-z0-9_+/.:-]*")
_DIGIT_RUN = re.compile(r"\d+")
_LIVE = frozenset(":/.-年月년월h时時点點시 ") | session.QUANTITY_NEXT  # what _digit_shapes reads after digits
_CARD_USER = Verdict("named `user` in `{{…}}`: the user's name, per user", HIGH)
_CARD_PAIR_USER = Verdict("named `user` beside `{char}`: the user's name, per user", HIGH)


#: a ``$name`` slot (Python's string.Template, shell-style templates) in prose: not code's ``$x = …``,
#: ``$x->y``, ``$x[…]`` nor a call
_DOLLAR = re.compile(r"\$([a-z_][A-Za-z0-9_]*)\b(?![(\[{]|[ \t]*=[^=]|->|\.[A-Za-z_])")
_DOLLAR_BEFORE = frozenset(("", " ", "\t", "\n", '"', "'", "(", "«", "“", "`"))


def _placeholder(text: str, at: int, out: list[Candidate], memo: dict) -> int:
    m = _PH.match(text, at)
    if not m:
        if text.startswith("{{", at) and (end := braced_expression(text, at)) > 0:
            expr = " ".join(text[at + 2 : end - 2].split())  # n8n: {{ (() => { const now = $now … })() }}
            verdict = judge_expression(expr)
            shape = verdict.reason if verdict else ""
            out.append(
                Candidate("placeholder", at, end, verdict.severity if verdict else HIGH, shape, expr[:200])
            )
            return end
        if text.startswith("{%", at) and (end := loop_at(text, at, out)) > at:
            return end  # {% for item in customer.orders %}…{% endfor %}: one rendered block
        if text[at] == "$" and (d := _DOLLAR.match(text, at)) and text[at - 1 : at] in _DOLLAR_BEFORE:
            verdict = judge_expression(d.group(1))  # string.Template's "Nous sommes le $date": by name only
            if verdict:
                out.append(
                    Candidate("placeholder", at, d.end(), verdict.severity, verdict.reason, d.group(1))
                )
                return d.end()
        return max(at + 1, session.state_json(text, at, out)) if text[at] == "{" else at + 1
    if m.group("sigil") or slots.control(m.group("d")):
        end = loop_at(text, at, out)  # {{range .State.Memories}}…{{end}}, {{#each recent}}…
        return end if end > at else m.end()  # {{#if …}}, {{/each}}, {{- if .Memory}}: control, not a value
    if m.group("strftime") is not None:
        out.append(Candidate("placeholder", at, m.end(), HIGH, STRFTIME, m.group(0)))
        return m.end()
    expr = next(g for g in m.group("positional", "dify", "d", "tag", "s", "p", "e", "f") if g is not None)
    verdict = judge_expression("now()" if m.group("tag") is not None else expr)
    if verdict is None and m.group("dify") and dify_state(expr, words):  # {{#conversation.cv_slots#}}
        verdict = Verdict("a Dify conversation variable: per session", HIGH)
    if verdict is None and expr.strip().lower() == "user":  # the character-card convention's user name
        if m.group("d") is not None:
            verdict = _CARD_USER  # {{user}}
        elif m.group("f") is not None and _carded(text, memo):
            verdict = _CARD_PAIR_USER  # {user} beside {char}
    if verdict and (given.content(text, expr, memo) or given.retrieved(text, at, expr, verdict.reason)):
        verdict = None  # "Here is the weather:\n{weather}": the material to work on
    shape = verdict.reason if verdict else (SETTING if is_setting(expr) else "")
    out.append(
        Candidate("placeholder", at, m.end(), verdict.severity if verdict else HIGH, shape, expr.strip())
    )
    return m.end()


def lower_aligned(text: str) -> str:
    """``text.lower()`` at the same positions: a character whose lower case is longer ("İ" → "i̇") stays."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)  # rare: İ and a few others


_EXPRESSION_REACH = 2000


def braced_expression(text: str, at: int) -> int:
    """The end of a ``{{ … }}`` expression with braces or lines of its own that opens with ``$`` or
    ``(`` (n8n's JavaScript: ``{{ (() => { … })() }}``, ``{{ $json.items.map(i => { … }) }}``), or -1."""
    if text[at + 2 : at + 12].lstrip()[:1] not in ("$", "("):
        return -1
    end = min(len(text), at + _EXPRESSION_REACH)
    blank = text.find("\n\n", at, end)
    depth = 0
    for m in _BRACE.finditer(text, at + 2, end if blank < 0 else blank):  # braces only, found in C
        if m.group() == "{":
            if depth == 0 and text.startswith("{{", m.start()):
                return -1  # another expression opens: this one was never closed
            depth += 1
        elif depth == 0:
            return m.start() + 2 if text.startswith("}}", m.start()) else -1
        else:
            depth -= 1
    return -1


_BRACE = re.compile(r"[{}]")


def _carded(text: str, memo: dict) -> bool:
    """The text writes the character-card pair with single braces (``{char}`` … ``{user}``)."""
    key = ("carded",)
    if key not in memo:
        memo[key] = "{char}" in text
    return memo[key]


def _digit_shapes(text: str, ts: int, te: int, out: list[Candidate]) -> int:
    """Shapes that start at a run of digits inside the token text[ts:te]; returns how far they reach.
    The character after a run picks the shapes worth trying (``-`` an ISO date, ``:`` a clock …)."""
    covered = ts
    for run in _DIGIT_RUN.finditer(text, ts, te):
        s, e = run.span()
        if s < covered:
            continue
        n = e - s
        nxt = text[e : e + 1]
        if nxt not in _LIVE and n != 4 and n != 10 and n != 13:
            continue  # no branch below takes these digits before such a character (a letter, ";", ")" …)
        end = s
        if n == 4 and nxt == "-":
            m = ISO_TS.match(text, s)
            if m:
                out.append(Candidate("time", s, m.end(), HIGH, "timestamp"))
            else:
                m = ISO_DATE.match(text, s) or ISO_WEEK.match(text, s)
                if m:
                    out.append(Candidate("date", s, m.end(), LOW, "iso"))
            end = m.end() if m else s
        elif n <= 2 and nxt == ":":
            m = CLOCK.match(text, s)
            if m:
                shape = "seconds" if m.group("hms").count(":") > 1 else "clock"
                out.append(Candidate("time", s, m.end(), HIGH, shape))
                end = m.end()
        elif nxt and ((n <= 2 and nxt in "/.-") or (n == 4 and nxt in "/.")):
            dotted = n <= 2 and nxt == "."  # only d.m.yyyy: its second "." two or three on
            m = None if dotted and "." not in text[e + 2 : e + 4] else NUM_DATE.match(text, s)
            if m:
                out.append(Candidate("date", s, m.end(), LOW, "numeric"))
                end = m.end()
            elif n == 4 and text[s] in "12":
                end = dates.at_year(text, s, e, out)
        elif nxt and nxt in "年月년월":
            end = dates.cjk_at(text, s, out)
        elif n <= 2 and nxt and nxt in "h时時点點시 ":
            c = text[e + 1 : e + 2]  # "12 apples": no form goes on after " " and an ASCII character but "h"
            plain = nxt == " " and c != "h" and c.isascii() and not c.isspace()
            m = None if plain else OTHER_CLOCK.match(text, s)
            if m:
                out.append(Candidate("time", s, m.end(), HIGH, "clock"))
                end = m.end()
        elif n == 4 and text[s] in "12" and text[e + 1 : e + 2] in ("年", "년"):
            end = dates.cjk_at(text, s, out)
        elif n == 4 and text[s] in "12":
            end = dates.at_year(text, s, e, out)
        elif n in (10, 13):
            m = EPOCH.match(text, s)
            if m and not text.startswith("1234567890", s):  # the stock made-up epoch of samples
                ms = n == 13 and int(m.group(0)) in EPOCH_MS
                out.append(Candidate("time", s, m.end(), HIGH, "epoch-ms" if ms else "epoch"))
                end = m.end()
        if (
            end == s
            and nxt in session.QUANTITY_NEXT
            and (nxt not in ",." or "0" <= text[e + 1 : e + 2] <= "9")
        ):
            end = session.quantity(text, s, e, out)
        if end > s:
            covered = end
    return covered


def scan(text: str, memo: dict | None = None) -> list[Candidate]:
    """Every candidate span of ``text``, unjudged, in no particular order; ``memo``: this call's
    answers about the text, shared with the judge (never kept across calls)."""
    out: list[Candidate] = []
    covered = 0
    tokch = _TOKEN_CHARS
    months: list[int] = []
    memo = {} if memo is None else memo
    capitals, month_names = _MONTH_CAPITALS, phrases.MONTHS
    for a in _ANCHOR_OR_MONTH.finditer(text):
        p, q = a.span()
        if text[p] in capitals:
            if text[p:q] in month_names:
                months.append(p)
            continue
        if text[q - 1] in capitals and text[q - 1 : q + 2] in month_names:
            months.append(q - 1)  # the anchor's last character starts a month name
        if p < covered:
            continue
        if not "0" <= text[p] <= "9":
            covered = _placeholder(text, p, out, memo)
            continue
        ts = p
        while ts > 0 and text[ts - 1] in tokch:
            ts -= 1
        te = _TOKEN_END.match(text, p).end()
        reach = _digit_shapes(text, ts, te, out)
        if te - ts >= 6:
            token_ids(text, ts, te, out)
        covered = max(te, reach)
    k = find_led(text, "eyJ", 2)  # a JWT's "J": rare in prose, so found with memchr
    while k >= 0:
        m = JWT.match(text, k)
        if m and not any(c.kind == "jwt" and c.start == k for c in out):
            out.append(Candidate("jwt", *m.span(), HIGH))
        k = find_led(text, "eyJ", 2, start=k + 3)
    phrases.text_dates(text, out, months)
    low = lower_aligned(text)
    current = phrases.today_phrases(text, low, out)  # where each "current" is, for user_values
    weekdays.find(text, low, out)  # "Heute ist Donnerstag": other languages' "today is" and a weekday
    gitstate.find(text, low, out, session.blocks(text, low, out))  # one pass over "git" for both
    session.readings(text, low, out)
    users = slots.user_values(text, low, out, current)  # where each "user" is, for labelled_lines
    rendered.labelled_lines(text, low, out, users)
    rendered_dates.find(text, out)
    slots.blanks(text, out)  # each finds its marks itself, a miss at memchr cost
    slots.concatenated(text, out)
    return out
