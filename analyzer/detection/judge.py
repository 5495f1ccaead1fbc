"""Keep or drop each candidate from :mod:`.shapes`, and say why it was kept.

Per kind, the words around a value decide: nothing inside code or labelled as an example is
volatile; timestamps, clock times, dates, template slots, UUIDs and ids each have their own
keep/drop rules (a "now" label, a today-phrase, fixed or schedule wording, links, digests).
``context="description"`` keeps a clock time or a date only with a "now" label or after a
today-phrase. Each rule has a test in ``tests/analyzer/test_detect.py``.

It does NOT find anything itself (:mod:`.shapes` does). docs/lint.md ("What counts as volatile"): the rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property

from analyzer.detection import context as cx
from analyzer.detection import inlinecode, loops, regions, rendered_dates, slotcontext
from analyzer.detection.around import Around, short
from analyzer.detection.candidate import SETTING, STRFTIME, Candidate
from analyzer.detection.ids import EPOCH_MS, id_epoch, record_value
from analyzer.detection.listings import in_range
from analyzer.detection.prefilters import find_led
from analyzer.detection.randomness import UUID_KIND_WORDS, uuid_families, uuid_kind
from analyzer.detection.randomness import looks_random_b64 as random_b64
from analyzer.detection.randomness import looks_random_hex as random_hex

#: the stronger kind first where candidates start together
_ORDER = "jwt time uuid request-id placeholder today-phrase date hex-id base64-id state"
PRIORITY = {kind: i for i, kind in enumerate(_ORDER.split())}
Kept = Iterator[tuple[Candidate, str]]
_EPOCH_CONTEXT = re.compile(
    r"(?i)(?:time|timestamp|\bts|epoch|created|updated|\bat\b|\bnow|\bdate|expires?|\bexp\b|\biat\b|_at)(?:\s+(?:is|was))?\W{0,6}$"
)
_EXAMPLE_RIGHT_BEFORE = re.compile(r"(?i)(?:\be\.g\.?|\bi\.e\.?|\blike|\bsuch as|\bexample:?)\W{0,3}$")
_ID_LABEL = re.compile(
    r"(?i)(?<![a-z])(?:request|req|session|sess|trace|span|correlation|conversation|thread|chat|run|job|message|msg|call|transaction|txn|turn|interaction|user|visitor|device|order|ticket|nonce|instance)(?![a-z])[\w -]{0,12}\W{0,4}$"
)
_FULL, _SECONDS = "a full timestamp", "a clock reading to the second"
_DATE_ALONE, _CLOCK_ALONE = "a date alone on its line", "a clock time alone on its line"
#: the reasons of values kept for their shape alone, with no label
UNLABELLED = frozenset((_FULL, _SECONDS, _DATE_ALONE, _CLOCK_ALONE))
_STATE_REASONS = {
    "quantity": lambda c, w: "a count or amount read per request",
    "coordinates": lambda c, w: f"coordinates {w.labelled}",
    "state-json": lambda c, w: f"state JSON {w.labelled}",
    "block": lambda c, w: f"a session snapshot under `{short(c.expr)}`",
    "user": lambda c, w: f"the current user's value under `{short(c.expr)}`",
    "place": lambda c, w: "the place of the date before it",
    "period": lambda c, w: "a month or week of a period counted back from today",
    "elapsed": lambda c, w: "time elapsed until now, per request",
    "memory": lambda c, w: f"a memory block under `{short(c.expr)}`, rendered per session",
}


def _unless_example(why: str | None, w: Around) -> str | None:
    """``why``, unless the value is an example: the costliest test, read last and only for a value kept."""
    return None if why is None or w.example else why


def _year(value: str) -> int | None:
    m = re.search(r"(?<!\d)(1[6-9]\d\d|2\d\d\d)(?!\d)", value)
    return int(m.group(1)) if m else None


class _Judge:
    def __init__(self, text: str, cands: list[Candidate], context: str, memo: dict | None = None) -> None:
        self.text, self.cands = text, cands
        self.code = inlinecode.JudgedCode(text)
        self.tags = regions.ExampleTags(text)
        self.description = context == "description"
        self.families = uuid_families([text[c.start : c.end] for c in cands if c.kind == "uuid"])
        self.phrase_start = self.phrase_end = -10
        self.last_kept: Candidate | None = None
        self.last_why = ""
        self.floor = 0
        #: kept slots as written (``{{current_date}}``, spaces aside): the same slot again renders the same value
        self.kept_slots: set[str] = set()
        self.jinja = find_led(text, "{%") >= 0  # Jinja tags (raw blocks, loops), at each "{" by memchr
        # a {# comment, or a raw block (only where the text says "endraw", as before: an unclosed raw is no block)
        self.quiet_parts = find_led(text, "{#") >= 0 or (self.jinja and "endraw" in text)
        self.owners = slotcontext.state_owners(cands)
        self.memo: dict = {} if memo is None else memo  # this call's answers about the text (.around)

    @cached_property
    def date_spans(self) -> list[tuple[int, int]]:
        """Where each date candidate lies: the other end of a rendered range."""
        return sorted((c.start, c.end) for c in self.cands if c.kind == "date")

    def holds_values(self, block: Candidate) -> bool:
        """A snapshot block holds a rendered value (or a slot, or git status lines)."""
        if block.expr.lower().lstrip("<#: ").startswith("git"):
            return True
        return any(
            o is not block and block.start <= o.start < block.end and o.kind != "today-phrase"
            for o in self.cands
        )

    def after_phrase(self, c: Candidate) -> bool:
        gap = self.text[self.phrase_end : c.start] if self.phrase_end >= 0 else "\n"
        return 0 <= c.start - self.phrase_end <= 3 and "\n" not in gap

    def reason(self, c: Candidate) -> str | None:
        """Why ``c`` is volatile, or None to drop it."""
        text = self.text
        if c.kind == "time" and c.shape in ("clock", "seconds") and in_range(text, c.start, c.end):
            return None  # a schedule ("09:00–17:00"), read first: code or not, it is dropped
        if c.kind == "placeholder" and self.quiet_parts and inlinecode.unrendered(text, c.start):
            return None  # {% raw %}…{% endraw %}, {# … #}: left as written
        if c.kind == "placeholder" and inlinecode.slot_form(text, c.start, c.end) in self.kept_slots:
            return f"the same slot as `{short(c.expr)}` before"  # in code or an example too: it is filled
        if c.start in self.code or (c.kind != "placeholder" and inlinecode.in_statement(text, c.start)):
            return None
        if c.shape != "prefixed" and record_value(text, c.start, c.kind, self.memo):  # not "id: sess_…"
            return None  # "id": "03b4…", "createdAt": "2024-…" of a workflow export: fixed where it is
        w = Around(text, c, self.floor, self.tags, self.memo)
        if c.kind == "today-phrase":
            return None if w.example else ""  # the wording itself: its finding explains it
        if c.kind == "placeholder":
            if c.shape in (SETTING, "") and (sibling := slotcontext.family(c.expr, self.owners)):
                return None if w.example else f"the same state as `{short(sibling)}`"
            if c.shape == SETTING:
                bound = slotcontext.range_bound(c.expr) and slotcontext.in_period(text, c.start, c.end)
                return slotcontext.BOUND_REASON if bound and not w.example else None
            if c.shape == STRFTIME:  # not as an argument: strftime_now("%d %b %Y") is judged as the call
                arg = text[max(0, c.start - 2) : c.start] in ('("', "('")
                return None if arg or w.example or w.static else "a strftime format: rendered with the clock"
            if "." in c.expr and self.jinja and loops.item_field(text, c.start, c.expr, self.memo):
                return None  # a field of a loop's item: judged with its loop
            if c.shape:
                return None if _EXAMPLE_RIGHT_BEFORE.search(text, max(0, c.start - 16), c.start) else c.shape
            if w.static:
                return None
            k = self.last_kept
            if self.after_phrase(c):
                why = self.follows()
            elif k and k.kind in ("date", "time") and text[k.end : c.start] in (" in ", " in: "):
                why = "the place of the date before it"  # "Today is Thursday, 24 April 2025 in _____"
            elif k and self.last_why.startswith("where") and slotcontext.place_goes_on(text, k, c, self.memo):
                why = "where the user is, as the slot before it"  # "located in {city}, {country} {flag}"
            else:
                why = slotcontext.labelled(text, c, w)
            return _unless_example(why, w)
        if c.kind == "state":
            if w.example or (c.shape == "block" and not self.holds_values(c)):
                return None
            k = self.last_kept
            if c.shape == "place" and not (
                k and k.kind in ("date", "time") and text[k.end : c.start].strip() == "in"
            ):
                return None  # "… 24 April 2025 in Istanbul." only after a kept date
            return _STATE_REASONS[c.shape](c, w)
        if c.kind == "time":
            return self.time(c, w)
        if c.kind == "date":
            return self.date(c, w)
        if c.kind == "request-id" and c.shape == "labelled-id":
            return None if w.example else f"labelled `{short(c.expr)}`"
        if w.example or w.response_field:
            return None
        value = w.value
        if c.kind == "uuid":
            return self.uuid(c, w)
        if c.kind == "request-id" and c.shape == "ulid":
            return None if cx.FIXED.search(w.near) else "a ULID: minted per request, at its own millisecond"
        if c.kind == "request-id":
            if c.shape == "typed" and (
                not random_b64(value.split("_", 1)[-1].split("-", 1)[-1] + "Aa1")
                or cx.FIXED.search(w.near)
                or cx.FIXED_AFTER.match(cx.after(text, c.end, 40))
            ):
                return None  # a word-like suffix, or a stable project/app key
            return f"a `{value.split('_')[0].split('-')[0]}` id"
        if c.kind == "jwt":
            return "a JWT: a per-session credential"
        if cx.in_url(text, c.start) or cx.digest_label(text, c.start, w.near) or cx.FIXED.search(w.near):
            return None
        if c.kind == "hex-id":
            return f"{len(value)} random-looking hex digits" if random_hex(value) else None
        return f"{len(value.rstrip('='))} random-looking base64 characters" if random_b64(value) else None

    def follows(self) -> str:
        return f"follows `{short(self.text[self.phrase_start : self.phrase_end])}`"

    def time(self, c: Candidate, w: Around) -> str | None:
        text, value = self.text, w.value
        if c.shape in ("epoch", "epoch-ms"):
            if w.example or w.response_field:
                return None  # an epoch is machine-rendered: even an "expires at" one is a session's, not a fixed date
            if c.shape == "epoch":
                timed = _EPOCH_CONTEXT.search(text, max(0, c.start - 24), c.start)
                return "epoch seconds after a time word" if timed else None
            fresh = int(value) in EPOCH_MS and not id_epoch(
                text, c.start, c.end, self.memo
            )  # a node's id is no clock
            return "epoch milliseconds of 2017–2036" if fresh else None
        if c.shape == "timestamp":
            if self.after_phrase(c):
                return self.follows()
            if w.example or w.static or w.row_field or (self.description and not w.now):
                return None
            year = _year(value)
            if year is not None and year < 2000:
                return None
            return w.labelled if w.now else None if w.event else _FULL
        if self.after_phrase(c):  # a schedule ("09:00–17:00") was dropped before (reason)
            return _unless_example(self.follows(), w)
        if rendered_dates.after_date(self.text, self.last_kept, c):
            return _unless_example("the time of the date before it", w)
        if w.static or (not w.now and (self.description or w.around)):
            return None
        if w.now:
            why = None if w.hypothetical else w.labelled
        elif cx.THEIR_TIME_AFTER.match(text, c.end):
            why = "a clock time said to be the user's own"
        else:
            alone = c.shape != "seconds" and cx.alone_on_line(text, c.start, c.end) and not w.event
            why = _SECONDS if c.shape == "seconds" else _CLOCK_ALONE if alone else None
        return _unless_example(why, w)

    def date(self, c: Candidate, w: Around) -> str | None:
        text = self.text
        if c.shape == "current-period":
            year = _year(w.value)  # "The year is 1920" of a story, "the current year is 2030" of an example
            return (
                None
                if w.example
                or w.static
                or not (year is None and w.value.isalpha() or year and 2000 <= year < 2100)
                else "the current year or month"
            )
        if c.shape == "weekday-today":
            return None if w.example else f"the weekday after `{c.expr}`"
        if c.shape == "weekday":
            kept_date = rendered_dates.weekday_of_kept(text, self.last_kept, c)
            return "the weekday of the date before it" if kept_date else None
        if self.after_phrase(c) or c.shape == "after-today":
            return None if c.shape == "after-today" and w.conditional else self.follows()
        if rendered_dates.after_time(text, self.last_kept, c):
            return "the date of the time before it"
        if rendered_dates.restated(text, self.last_kept, c):
            return "the date before it, in another form"
        time_after = c.shape != "iso" and rendered_dates.TIME_AFTER.match(text, c.end)
        if time_after and not (w.example or w.static or w.event):
            return "the date of the time after it"
        if rendered_dates.user_event(w.label) and not w.example:
            return f"{w.labelled}: an event of the user's account"
        if rendered_dates.period_bound(text, c.start, c.end, self.date_spans) and not w.example:
            return slotcontext.BOUND_REASON
        if cx.static_date(text, c.start, c.end) or w.static:
            return None
        year = _year(w.value)
        if year is not None and year < 2000:
            return None
        if '"' in text[c.start - 3 : c.start] or "“" in text[c.start - 3 : c.start]:
            if cx.in_record_list(text, c.start):
                return None
        if w.now:
            return None if w.hypothetical else _unless_example(w.labelled, w)
        if self.description or w.around:
            return None
        alone = cx.alone_on_line(text, c.start, c.end) and not w.event
        return _unless_example(_DATE_ALONE if alone else None, w)

    def uuid(self, c: Candidate, w: Around) -> str | None:
        value, near = w.value, w.near
        kind = uuid_kind(value)
        if kind == "pattern" and len(set(value.replace("-", ""))) <= 1:
            return None  # the nil and max UUIDs are constants
        if _ID_LABEL.search(near) and not cx.FIXED.search(near):
            return f"labelled `{short(near)}`"
        if kind in ("pattern", "name", "nonstandard") or value in self.families:
            return None
        if cx.in_url(self.text, c.start) or cx.FIXED.search(near):
            return None
        return UUID_KIND_WORDS[kind]

    def run(self, cands: list[Candidate]) -> Kept:
        taken_until = dropped_until = -1
        for c in sorted(cands, key=lambda v: (v.start, -(v.end - v.start), PRIORITY[v.kind])):
            if c.start < taken_until or c.end <= dropped_until:
                continue  # overlaps a kept value, or lies inside a dropped one (no weaker kind gets its text)
            why = self.reason(c)
            if why is None:
                dropped_until = max(dropped_until, c.end)
                continue
            taken_until = c.end
            if c.kind == "placeholder" and c.expr.strip("_{}") and c.expr != "blank":
                self.kept_slots.add(inlinecode.slot_form(self.text, c.start, c.end))
            if c.kind == "today-phrase":
                self.phrase_start, self.phrase_end = c.start, c.end
            else:
                self.last_kept, self.last_why, self.floor = c, why, c.end
            yield c, why


def judged(text: str, cands: list[Candidate], context: str = "prompt", memo: dict | None = None) -> Kept:
    """The kept candidates of ``text``, in order and without overlaps, each with its reason (``memo``: the scan's)."""
    return _Judge(text, cands, context, memo).run(cands)
