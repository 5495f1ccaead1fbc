"""PG001–PG009: a volatile value (time, date, "today is", placeholder, UUID, id, JWT, random id,
session state) inside the cacheable prefix. One rule class, nine entries.

Each :class:`VolatileValueRule` pairs its :class:`~analyzer.lint.model.Rule` with the detector
kinds it reports; ``check`` gives one finding per such value in a cacheable unit, saying why it
was judged volatile. Entries have ``RULE`` and ``check`` like the one-rule modules.

It does NOT flag values in the per-request tail, nor detect anything itself (:mod:`analyzer.detect`,
run once per document by :class:`~analyzer.lint.doc.Doc`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from analyzer.lint.doc import Doc
from analyzer.lint.model import Finding, Rule
from analyzer.lint.rules._volatile import LABELS, because, short, where


@dataclass(frozen=True)
class VolatileValueRule:
    RULE: Rule
    #: analyzer.detect kinds this rule reports
    kinds: tuple[str, ...]
    #: a finding takes the detected value's severity instead of the rule's
    own_severity: bool = False

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in LABELS]
        if not self.kinds or unknown:
            raise ValueError(f"{self.RULE.code}: unknown detector kinds {unknown or self.kinds!r}")

    def check(self, doc: Doc) -> Iterator[Finding]:
        rule = self.RULE
        for unit, vols in zip(doc.units, doc.vols):
            if not unit.cacheable:
                continue
            for v in vols:
                if v.kind not in self.kinds:
                    continue
                line, col = unit.position(v.start)
                end_line, end_col = unit.end(v.end)
                msg = rule.message.format(
                    label=LABELS[v.kind], value=short(v.value), where=where(unit.field)
                ) + because(v)
                yield Finding(
                    rule,
                    msg,
                    doc.file.path,
                    line,
                    col,
                    end_line,
                    end_col,
                    field=unit.field,
                    key=f"{v.kind}:{v.value}",
                    group=v.kind,
                    severity=v.severity if self.own_severity else None,
                )


VOLATILE_VALUE_RULES: list[VolatileValueRule] = [
    VolatileValueRule(
        Rule(
            code="PG001",
            name="time-in-prefix",
            summary="Time of day or timestamp in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix changes every request and forks the cache there",
            why="A clock time or timestamp differs on every request. Providers cache exact prefixes, so every token after it is re-billed at the full input price on every call.",
            example="system: 'Current time: 14:05 UTC. You are a support agent…' (followed by 3,000 tokens of policy)",
            fix="Move the time to the end of the prompt (the last user message), or drop it; round it to the day only if the model needs a date.",
            severity="high",
        ),
        kinds=("time",),
    ),
    VolatileValueRule(
        Rule(
            code="PG002",
            name="date-in-prefix",
            summary="Date in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix changes at midnight and forks the cache there",
            why="A rendered date is the same all day but changes at midnight (per time zone): every cache entry after it is lost once a day, and a per-user time zone forks it per user.",
            example="system: 'Today: 2026-11-30. You are…'",
            fix="Put the date in the last message, after the cached prefix.",
            severity="low",
        ),
        kinds=("date",),
    ),
    VolatileValueRule(
        Rule(
            code="PG003",
            name="today-phrase",
            summary="A 'today is' / 'current date' phrase in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix introduces a value that changes per day or per request",
            why="Phrases such as 'Today is …' or 'Current date/time:' are followed by a rendered value that changes, so the prefix stops repeating at that point.",
            example="system: 'Today is Monday, November 30. Answer politely…'",
            fix="Move the phrase and its value to the end of the prompt.",
            severity="medium",
        ),
        kinds=("today-phrase",),
    ),
    VolatileValueRule(
        Rule(
            code="PG004",
            name="volatile-placeholder",
            summary="Template placeholder for a volatile value in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix is rendered per request (a clock, date or id)",
            why="A placeholder named like now, date, time, timestamp, uuid or request_id renders a different value into the prompt each time, so nothing after it can be cached.",
            example="prompt template: 'It is {{now}}. You are a helpful assistant…'",
            fix="Render the placeholder in the final user message instead, or remove it.",
            severity="high",
        ),
        kinds=("placeholder",),
        own_severity=True,
    ),
    VolatileValueRule(
        Rule(
            code="PG005",
            name="uuid-in-prefix",
            summary="UUID in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix is usually generated per request or per session",
            why="A UUID is almost always a per-request or per-session identifier; rendered into the prefix it makes every prompt unique from that point on.",
            example="system: 'conversation 550e8400-e29b-41d4-a716-446655440000. You are…'",
            fix="Send identifiers as API metadata (user, metadata, prompt_cache_key) or at the end of the prompt.",
            severity="high",
        ),
        kinds=("uuid",),
    ),
    VolatileValueRule(
        Rule(
            code="PG006",
            name="request-id-in-prefix",
            summary="Request, session or trace id in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix is unique per request or session",
            why="Request, session, trace and correlation ids differ on every call; in the prefix they fork the cache for everything after them.",
            example="system: 'request_id: 7f9e2c1a91. You are…'",
            fix="Pass ids in headers or API metadata, not in the prompt; if the model needs one, put it in the last message.",
            severity="high",
        ),
        kinds=("request-id",),
    ),
    VolatileValueRule(
        Rule(
            code="PG007",
            name="jwt-in-prefix",
            summary="JWT in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix is a per-session credential",
            why="A JSON Web Token is per session (and expires): in the prompt it forks the cache and leaks a credential to the model provider.",
            example="system: 'auth: eyJhbGciOi…'",
            fix="Never put tokens in prompts; authenticate tool calls outside the model.",
            severity="high",
        ),
        kinds=("jwt",),
    ),
    VolatileValueRule(
        Rule(
            code="PG008",
            name="random-id-in-prefix",
            summary="Long random hex or base64 id in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix looks generated per request (high entropy)",
            why="A long high-entropy string (nonce, key, hash of per-request data) is unlikely to repeat between requests, so the cached prefix ends before it.",
            example="system: 'nonce 9f86d081884c7d659a2feaa0c55ad015. You are…'",
            fix="Remove the value or move it to the last message; static digests are fine when labelled (commit, sha256, checksum).",
            severity="high",
        ),
        kinds=("hex-id", "base64-id"),
    ),
    VolatileValueRule(
        Rule(
            code="PG009",
            name="session-state-in-prefix",
            summary="Session state (a count, free memory, state JSON, an environment or git-status block) in a cacheable prefix",
            message="{label} `{value}` in the cacheable prefix is read per request or per session and forks the cache there",
            why="Agents render their environment into the prompt: tokens used, free memory, the app's state, the working directory, the git branch and status. Each is read afresh per request or per session, so the cached prefix ends where it starts.",
            example="system: '<env>\\nWorking directory: /home/ana/shop\\nToday's date: 2026-11-30\\n</env>\\nYou are a coding agent…'",
            fix="Move the block or value to the end of the latest user message (`--rewrite aggressive` does), or send it as a tool result.",
            severity="high",
        ),
        kinds=("state",),
        own_severity=True,
    ),
]
