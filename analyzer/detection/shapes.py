"""What a volatile value looks like, found in one pass over the text.

:func:`scan` returns every *candidate* span (clock time, date, UUID, template slot …) with its
kind and shape facts. One regex finds anchors (digit runs that can start a shape, template
sigils ``{ $ % <``), another month names, ``str.find`` the "today is" words and JWTs; each shape
regex is then tried only *at* an anchor, never over the whole text (the previous detector's
one pass per pattern took about 10 ms per 20 KB; ``prefixgate bench lint`` compares them).

It does NOT judge anything (:mod:`.judge`) or read context beyond the shapes' own boundaries.
"""

from __future__ import annotations

import re

from analyzer.detection import dates, gitstate, given, phrases, rendered, rendered_dates, session, slots
from analyzer.detection.candidate import HIGH, LOW, SETTING, STRFTIME, Candidate
from analyzer.detection.loops import loop_at
from analyzer.detection.names import Verdict, is_setting, judge_expression
from analyzer.detection.prefilters import find_led
from analyzer.detection.randomness import looks_random_b64, looks_random_hex, ulid_ms

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
#: 2017–2036 in milliseconds: a clock reading even unlabelled
EPOCH_MS = range(1_500_000_000_000, 2_100_000_000_000)
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
UUID = re.compile(
    r"(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])"
)
ID_LABEL_BEFORE = re.compile(
    r"(?i)\b(?:x-)?(?:request|req|session|sess|trace|span|correlation|conversation|run|message|msg|call|transaction|txn)[-_ ]?id\b(?:\W{0,3}[:=]\s*[\"'`]?|(\s+(?:is\s+)?))\Z"
)
#: "session=V1StGXR8_Z5jdHi6B-myT", "Trace: 4bf9…": a random-looking value right after a bare id owner
ID_BARE_LABEL = re.compile(
    r"(?i)\b(?:x-)?(?:request|session|sess|trace|correlation|conversation|thread|run)\s*[:=]\s*[\"'`]?\Z"
)
#: a ULID: 48 bits of milliseconds then 80 random bits, in Crockford base32
ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
ID_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.:]{5,}")
PREFIXED_ID = re.compile(
    r"\b(?:req|msg|sess|resp|run|call|toolu|chatcmpl|cmpl|trace|evt|span)[_-][A-Za-z0-9]{10,}\b"
)
#: cus_N8s7Hq2LkP0xRt, sub_1QjZ…
TYPED_ID = re.compile(r"\b[a-z]{2,10}[_-](?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{12,40}\b")
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
HEX = re.compile(r"(?<![\w-])[0-9a-fA-F]{16,}(?![\w-])")
B64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{22,}(?![\w+/-])")

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


def _placeholder(text: str, at: int, out: list[Candidate], memo: dict) -> int:
    m = _PH.match(text, at)
    if not m:
        if text.startswith("{%", at) and (end := loop_at(text, at, out)) > at:
            return end  # {% for item in customer.orders %}…{% endfor %}: one rendered block
        return max(at + 1, session.state_json(text, at, out)) if text[at] == "{" else at + 1
    if m.group("sigil") or slots.control(m.group("d")):
        end = loop_at(text, at, out)  # {{range .State.Memories}}…{{end}}, {{#each recent}}…
        return end if end > at else m.end()  # {{#if …}}, {{/each}}, {{- if .Memory}}: control, not a value
    if m.group("strftime") is not None:
        out.append(Candidate("placeholder", at, m.end(), HIGH, STRFTIME, m.group(0)))
        return m.end()
    expr = next(g for g in m.group("positional", "dify", "d", "tag", "s", "p", "e", "f") if g is not None)
    verdict = judge_expression("now()" if m.group("tag") is not None else expr)
    if verdict is None and m.group("d") is not None and expr.strip().lower() == "user":
        verdict = _CARD_USER  # {{user}} beside {{char}}: the character-card convention's user name
    if verdict and (given.content(text, expr, memo) or given.retrieved(text, at, expr, verdict.reason)):
        verdict = None  # "Here is the weather:\n{weather}": the material to work on
    shape = verdict.reason if verdict else (SETTING if is_setting(expr) else "")
    out.append(
        Candidate("placeholder", at, m.end(), verdict.severity if verdict else HIGH, shape, expr.strip())
    )
    return m.end()


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
            m = NUM_DATE.match(text, s)
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


def _token_shapes(text: str, ts: int, te: int, out: list[Candidate]) -> None:
    """Ids that are a whole token (or most of one): UUIDs, JWTs, prefixed, labelled, hex and base64 ids."""
    n = te - ts
    if n >= 36 and "-" in text[ts:te]:
        for m in UUID.finditer(text, ts, te):
            out.append(Candidate("uuid", *m.span(), HIGH))
    if n >= 6 and "id" in text[max(0, ts - 48) : ts].lower():
        label = ID_LABEL_BEFORE.search(text, max(0, ts - 48), ts)
        if label:
            m = ID_VALUE.match(text, ts)
            value = m.group(0).rstrip(".:") if m else ""
            # "request id abc123" (no colon): letters and digits needed
            unlabelled = label.group(1) is not None
            if (
                len(value) >= 6
                and any(ch.isdigit() for ch in value)
                and not (unlabelled and not any(ch.isalpha() for ch in value))
            ):
                out.append(
                    Candidate("request-id", ts, ts + len(value), HIGH, "labelled-id", label.group(0).strip())
                )
    if (
        n >= 16
        and text[ts - 1 : ts] in (":", "=", " ", '"', "'")
        and not any(c.kind == "request-id" and c.start == ts for c in out[-2:])
    ):
        label = ID_BARE_LABEL.search(text, max(0, ts - 24), ts)
        m = ID_VALUE.match(text, ts) if label else None
        value = m.group(0).rstrip(".:") if m else ""
        if len(value) >= 16 and (
            looks_random_b64(value) or (HEX.fullmatch(value) and looks_random_hex(value))
        ):
            out.append(
                Candidate("request-id", ts, ts + len(value), HIGH, "labelled-id", label.group(0).strip())
            )
    if n == 26 and ULID.fullmatch(text, ts, te) and ulid_ms(text[ts:te]) in EPOCH_MS:
        out.append(Candidate("request-id", ts, te, HIGH, "ulid"))
    if n >= 14:
        for m in PREFIXED_ID.finditer(text, ts, te):
            out.append(Candidate("request-id", *m.span(), HIGH, "prefixed"))
        for m in TYPED_ID.finditer(text, ts, te):
            out.append(Candidate("request-id", *m.span(), HIGH, "typed"))
        if "eyJ" in text[ts:te]:
            for m in JWT.finditer(text, ts, te):
                out.append(Candidate("jwt", *m.span(), HIGH))
    if n >= 16:
        for m in HEX.finditer(text, ts, te):
            out.append(Candidate("hex-id", *m.span(), HIGH))
    if n >= 22:
        for m in B64.finditer(text, ts, te):
            end = m.end()
            while end < len(text) and end - m.end() < 2 and text[end] == "=":
                end += 1
            out.append(Candidate("base64-id", m.start(), end, HIGH))


def scan(text: str) -> list[Candidate]:
    """Every candidate span of ``text``, unjudged, in no particular order."""
    out: list[Candidate] = []
    covered = 0
    tokch = _TOKEN_CHARS
    months: list[int] = []
    memo: dict = {}  # this call's answers about the text (never kept across calls)
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
            _token_shapes(text, ts, te, out)
        covered = max(te, reach)
    k = find_led(text, "eyJ", 2)  # a JWT's "J": rare in prose, so found with memchr
    while k >= 0:
        m = JWT.match(text, k)
        if m and not any(c.kind == "jwt" and c.start == k for c in out):
            out.append(Candidate("jwt", *m.span(), HIGH))
        k = find_led(text, "eyJ", 2, start=k + 3)
    phrases.text_dates(text, out, months)
    low = text.lower()
    current = phrases.today_phrases(text, low, out)  # where each "current" is, for user_values
    gitstate.find(text, low, out, session.blocks(text, low, out))  # one pass over "git" for both
    session.readings(text, low, out)
    slots.user_values(text, low, out, current)
    rendered.labelled_lines(text, low, out)
    rendered_dates.find(text, out)
    slots.blanks(text, out)  # each finds its marks itself, a miss at memchr cost
    slots.concatenated(text, out)
    return out
