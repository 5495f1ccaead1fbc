"""Realistic system prompts of a given size, the same for a given seed.

Each prompt is what a production assistant sends: a header with the values that change
per request (a clock time, a session id, a request UUID), then sections of policy prose
dense with static numbers (prices, versions, percentages, phone numbers, schedules,
durations), tool documentation with example values, a fenced JSON sample, template slots
with static names and a FAQ. About one line in twelve carries a number a naive detector
would take for a time, a date or an id.
"""

from __future__ import annotations

import random

_WORDS = (
    "account billing invoice refund order shipment warehouse policy customer agent support escalation priority "
    "subscription plan renewal upgrade downgrade discount coupon tax region currency payment method card bank "
    "transfer dispute chargeback fraud review document contract signature approval workflow ticket queue "
    "response answer question summary detail context reason example note warning error retry limit quota"
).split()
_STATIC = [
    "The Starter plan costs ${p}.50 per month and Pro costs ${q} per seat, billed annually at a {d}% discount.",
    "Version {a}.{b}.{c} of the mobile app fixed the login loop; ask users on {a}.{b}.0 or older to update.",
    "Office hours are 09:00-17:00 CET on weekdays and 10:00 to 14:00 on Saturdays.",
    "Call +1 (555) {p}{q}-{c}{a}{b}{d} for urgent outages; the fax line 555.987.6543 is no longer monitored.",
    "Refunds are possible within {q} days; after {p} days only store credit is offered.",
    "Escalate tickets older than {a} hours to tier {b}; SLA breaches above {d}% trigger a review.",
    "Uploads are limited to {q} MB per file and {p} files per message; images larger than 4096x4096 are resized.",
    "When quoting times, use the 24-hour clock, e.g. 14:30, and always name the time zone.",
    "Our knowledge base was last updated on 2024-0{a}-1{b}; articles older than {q} months may be stale.",
    "The API is at version 2023-06-01; the legacy v{a} endpoints were retired in 2022.",
    "Section {a}.{b} of the terms covers data retention ({q} days for logs, {p} months for invoices).",
    "Use ranges such as >={a}.{b},<{c}.0 when pinning the SDK; Python {a}.1{b} and Node {p} are supported.",
]
_TOOLS = [
    "- `lookup_order(order_id)`: order ids look like ORD-{p}{q}-{c}{a}{b}{d}; returns status and ETA.",
    "- `schedule_callback(time)`: time in HH:MM, for example 16:45; only between 08:00 and 18:00.",
    "- `issue_refund(amount_cents)`: amounts in cents (1999 means $19.99); at most {q}00 cents without approval.",
    "- `search_kb(query, top_k={a})`: returns up to {p} articles with a score from 0.0 to 1.0.",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(9, 18))]
    return " ".join(words).capitalize() + "."


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        p=rng.randint(10, 99),
        q=rng.randint(10, 99),
        a=rng.randint(1, 9),
        b=rng.randint(0, 9),
        c=rng.randint(0, 9),
        d=rng.randint(5, 40),
    )


def prompt(rng: random.Random, size: int = 20_480) -> str:
    """One system prompt of about ``size`` characters."""
    parts = [
        f"You are Nova, the support assistant of Acme Cloud.\nCurrent time: {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} UTC\n"
        f"Session: sess_{rng.getrandbits(64):016x}\nRequest id: {rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-a{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}\n",
        "\n## Tools\n" + "\n".join(_fill(t, rng) for t in _TOOLS) + "\n",
        '\n## Example request\n```json\n{"order_id": "ORD-2024-000123", "created_at": "2024-01-05T10:00:00Z"}\n```\n',
        "\nGreet {customer_name} by name and mention their {plan_name} plan when relevant.\n",
    ]
    size_now = sum(map(len, parts))
    section = 0
    while size_now < size:
        if rng.random() < 0.08:
            section += 1
            chunk = f"\n## Policy {section}\n"
        elif rng.random() < 0.12:
            chunk = _fill(rng.choice(_STATIC), rng) + " "
        else:
            chunk = _sentence(rng) + (" " if rng.random() < 0.85 else "\n")
        parts.append(chunk)
        size_now += len(chunk)
    return "".join(parts)[:size]


def prompts(n: int, size: int = 20_480, seed: int = 12) -> list[str]:
    rng = random.Random(seed)
    return [prompt(rng, size) for _ in range(n)]
