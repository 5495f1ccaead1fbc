"""A deterministic agent loop for ``prefixgate bench rewrite``: what real agents send.

:func:`conversation` yields the bodies of one agent conversation of ``turns`` turns (OpenAI Chat
Completions or Anthropic Messages) as typical frameworks build them: a long system prompt
starting with the time and a request id, eight tools whose order and schema key order change per
call, one assistant answer and one user turn more per call. ``volatile=False`` is the *ideal* app
(fixed time and id, tools in one order); ``shuffle=True`` keeps only the tool-order trouble.
Seeded: the same arguments give the same bodies in every process. It sends nothing.
See docs/measured.md (rewrite).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

_POLICY = (
    "You are Atlas, the operations agent for Example Logistics. You plan shipments, answer "
    "customers and file tickets. Always check the order in the order system before you answer; "
    "never promise a delivery date the carrier has not confirmed; escalate refunds above 500 EUR "
    "to a human; answer in the customer's language; keep answers under 120 words unless asked. "
)
_TOOLS = {
    "lookup_order": (
        "Find an order by its number and return its status, items and carrier.",
        {
            "order_id": ("string", "The order number, e.g. 'EX-10442'."),
            "include_items": ("boolean", "Return the line items too."),
        },
    ),
    "track_parcel": (
        "Ask the carrier where a parcel is.",
        {
            "carrier": ("string", "Carrier code: dhl, ups, dpd or gls."),
            "tracking_number": ("string", "The carrier's tracking number."),
        },
    ),
    "create_ticket": (
        "Open a support ticket for a human agent.",
        {
            "summary": ("string", "One line."),
            "priority": ("string", "low, normal or urgent."),
            "order_id": ("string", "Related order, if any."),
        },
    ),
    "refund": (
        "Refund all or part of an order (up to 500 EUR without a human).",
        {
            "order_id": ("string", "The order number."),
            "amount_eur": ("number", "Amount in euros."),
            "reason": ("string", "Why."),
        },
    ),
    "search_kb": (
        "Search the knowledge base articles.",
        {"query": ("string", "What to look for."), "limit": ("integer", "How many articles, 1-10.")},
    ),
    "schedule_pickup": (
        "Book a carrier pickup at a warehouse.",
        {
            "warehouse": ("string", "Warehouse code."),
            "date": ("string", "ISO date."),
            "parcels": ("integer", "How many parcels."),
        },
    ),
    "update_address": (
        "Change the delivery address of an order not yet shipped.",
        {"order_id": ("string", "The order number."), "address": ("string", "The full new address.")},
    ),
    "send_email": (
        "Send an email to the customer of an order.",
        {
            "order_id": ("string", "The order number."),
            "subject": ("string", "Subject line."),
            "body": ("string", "Plain text."),
        },
    ),
}
_QUESTIONS = [
    "Where is my order EX-{n}? It was due yesterday.",
    "Can you change the address for EX-{n} to Hauptstrasse 5, 10115 Berlin?",
    "The parcel for EX-{n} arrived damaged, I want a refund.",
    "Please book a pickup for 3 parcels at warehouse BER-2 tomorrow.",
    "What is your return policy for electronics?",
    "Order EX-{n} shows delivered but I have nothing.",
]


def _schema(params: dict[str, tuple[str, str]], rng: random.Random | None) -> dict[str, Any]:
    props = {name: {"type": kind, "description": text} for name, (kind, text) in params.items()}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": sorted(params)[:1],
        "additionalProperties": False,
    }
    if rng is None:
        return schema
    return _shuffled(schema, rng)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON with every object's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


def _tools(provider: str, rng: random.Random | None) -> list[dict[str, Any]]:
    names = list(_TOOLS)
    if rng is not None:
        rng.shuffle(names)
    out = []
    for name in names:
        text, params = _TOOLS[name]
        schema = _schema(params, rng)
        if provider == "anthropic":
            out.append({"name": name, "description": text, "input_schema": schema})
        else:
            out.append(
                {"type": "function", "function": {"name": name, "description": text, "parameters": schema}}
            )
    return out


def _system(now: datetime, request_id: str) -> str:
    """The volatile lines, then ~12 KB of stable instructions."""
    head = f"Current date and time: {now:%Y-%m-%d %H:%M:%S} UTC\nRequest id: {request_id}\n\n"
    return head + (_POLICY * 30)


def conversation(
    provider: str,
    turns: int = 24,
    *,
    volatile: bool = True,
    shuffle: bool | None = None,
    seed: int = 1,
    model: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The ``turns`` request bodies of one conversation, in order. ``volatile``: the time and
    a request id lead the system prompt; ``shuffle`` (default: as ``volatile``): tools and
    their schema keys come in a new order on each call."""
    shuffle = volatile if shuffle is None else shuffle
    rng = random.Random(seed)
    start = datetime(2026, 12, 1, 8, 15, 3, tzinfo=UTC)
    fixed_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    history: list[dict[str, Any]] = []
    for turn in range(turns):
        now = start + timedelta(seconds=7 * turn) if volatile else start
        request_id = str(uuid.UUID(int=rng.getrandbits(128), version=4)) if volatile else fixed_id
        question = _QUESTIONS[turn % len(_QUESTIONS)].format(n=10400 + turn)
        history.append({"role": "user", "content": question})
        tools = _tools(provider, rng if shuffle else None)
        system = _system(now, request_id)
        if provider == "anthropic":
            body = {
                "model": model or "claude-sonnet-4-6",
                "max_tokens": 64,
                "system": system,
                "tools": tools,
                "messages": [dict(m) for m in history],
            }
        else:
            body = {
                "model": model or "gpt-4o",
                "max_tokens": 64,
                "tools": tools,
                "messages": [{"role": "system", "content": system}, *(dict(m) for m in history)],
            }
        yield body
        history.append(
            {
                "role": "assistant",
                "content": f"Answer {turn}: I checked the order system; here is what I found for you.",
            }
        )
