"""Rewrite requests so the provider's prompt cache hits: ``off``, ``safe``, ``aggressive``.

``off`` forwards the body byte for byte; ``safe`` changes only where the cache can see content
(tools sorted, breakpoints, TTL, a routing key); ``aggressive`` also moves volatile values out
of the head. Every rewrite applied has a kebab-case id (:data:`REWRITES`); which apply follows
the upstream's ``rules``, and a header to send comes back in :attr:`Rewrite.headers`.

It does NOT do I/O, mutate its input, or keep state beyond :mod:`.movable`'s decision cache;
a rewrite that raises is the caller's to catch (the proxy records ``skipped-error``).
See docs/rewrite.md for every id, the order applied and the guarantees.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from analyzer.cache_rules import ANTHROPIC, MISTRAL, XAI
from analyzer.rewrite.breakpoints import ADD_BREAKPOINTS, CAP_BREAKPOINTS, place_breakpoints
from analyzer.rewrite.cache_key import PROMPT_CACHE_KEY, XAI_CONV_ID, add_cache_key, conv_id_header, head_key
from analyzer.rewrite.openai_breakpoints import (
    ADD_OPENAI_BREAKPOINTS,
    INSTRUCTIONS_AS_DEVELOPER,
    TTL_12H,
    place_openai_breakpoints,
)
from analyzer.rewrite.tools import SORT_TOOL_KEYS, SORT_TOOLS, sort_tools
from analyzer.rewrite.ttl import TTL_1H, HeadReturns, apply_ttl, pays_for_1h, pays_for_12h, write_12h_ratio
from analyzer.rewrite.volatile import MOVE_BLOCKS, MOVE_VALUES, move_volatile

OFF, SAFE, AGGRESSIVE = "off", "safe", "aggressive"
MODES = (OFF, SAFE, AGGRESSIVE)
ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
APIS = (ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES)
SKIPPED_SHAPE, SKIPPED_ERROR = "skipped-unknown-shape", "skipped-error"
REWRITES = {
    MOVE_VALUES: "volatile values moved from system/tools to the end of the latest user turn",
    MOVE_BLOCKS: "volatile system blocks moved to the end of the latest user turn",
    SORT_TOOLS: "tools sorted by name",
    SORT_TOOL_KEYS: "JSON keys inside tools sorted",
    ADD_BREAKPOINTS: "cache_control breakpoints added after tools, system and the conversation so far",
    CAP_BREAKPOINTS: "the oldest middle breakpoints of a request with more than 4 dropped",
    TTL_1H: "head breakpoints marked ttl 1h (the head returns after 5-60 minutes)",
    PROMPT_CACHE_KEY: "prompt_cache_key set from the tenant and the masked head",
    XAI_CONV_ID: "x-grok-conv-id header set from the tenant and the masked head (xAI Chat Completions)",
    INSTRUCTIONS_AS_DEVELOPER: "string instructions moved into a leading developer item carrying the head breakpoint",
    ADD_OPENAI_BREAKPOINTS: "prompt_cache_breakpoint markers added at the end of the head and before the newest turn (GPT-5.6+)",
    TTL_12H: "the head breakpoint marked ttl 12h (Responses; the head returns after 30 minutes-12 hours; 12h writes priced)",
}
OPENAI_RULES = "openai"
#: OpenAI-protocol upstreams whose rules differ only in the routing hint
HINT_RULES = (XAI, MISTRAL)

__all__ = [
    "AGGRESSIVE",
    "APIS",
    "MODES",
    "OFF",
    "HINT_RULES",
    "REWRITES",
    "SAFE",
    "HeadReturns",
    "Rewrite",
    "api_for",
    "head_key",
    "rewrite_request",
    "write_12h_ratio",
]


@dataclass(frozen=True, slots=True)
class Rewrite:
    #: None: forward the original bytes
    body: dict[str, Any] | None
    #: rewrite ids, or one skipped-* id
    applied: list[str] = field(default_factory=list)
    #: request headers to add upstream (xAI's x-grok-conv-id)
    headers: dict[str, str] = field(default_factory=dict)


def api_for(provider: str, route: str) -> str | None:
    """Which request shape a route takes, or None when no rewrite applies to it."""
    path = route.split("?", 1)[0].rstrip("/")
    if provider == "anthropic":
        return ANTHROPIC_MESSAGES if path.endswith("/messages") else None
    if path.endswith("/chat/completions"):
        return OPENAI_CHAT
    if path.endswith("/responses"):
        return OPENAI_RESPONSES
    return None


def _understood(api: str, body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    if body.get("tools") is not None and not isinstance(body["tools"], list):
        return False
    if api == OPENAI_RESPONSES:
        return isinstance(body.get("input", ""), (str, list))
    return isinstance(body.get("messages"), list) and bool(body["messages"])


def rewrite_request(
    api: str,
    body: Any,
    *,
    mode: str,
    model: str | None = None,
    tenant: str = "anonymous",
    head_returns: HeadReturns | None = None,
    rules: str | None = None,
    write_12h: float | None = None,
    headers: Container[str] = (),
) -> Rewrite:
    """The body to forward for ``api`` under ``mode`` (``body`` is never mutated).

    ``model``: the request's (default: the body's ``model``); ``rules``: whose caching rules the
    upstream follows (default: the API's provider); ``head_returns``: what the proxy saw of this head
    over time (Anthropic: 5-minute / 1-hour windows; GPT-5.6+: 30-minute / 12-hour);
    ``write_12h``: the model's 12-hour write price over its input price, None where it is not
    priced (then never 12 h; nor on Chat Completions, whose usage does not split writes by TTL); ``headers``: the names of the headers the client sent (lower case)."""
    if mode not in MODES:
        raise ValueError(f"rewrite mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == OFF or api not in APIS:
        return Rewrite(None)
    if not _understood(api, body):
        return Rewrite(None, [SKIPPED_SHAPE])
    if model is None and isinstance(body.get("model"), str):
        model = body["model"]
    rules = rules or (ANTHROPIC if api == ANTHROPIC_MESSAGES else OPENAI_RULES)
    applied: list[str] = []
    added: dict[str, str] = {}
    cur = body
    # tools sorted first: a breakpoint the move hands to the last tool, and the moved descriptions'
    # lines, then follow the sorted order, not the client's
    tools, ids = sort_tools(cur.get("tools"))
    if tools is not None:
        cur, applied = {**cur, "tools": tools}, applied + ids
    if mode == AGGRESSIVE:
        moved, ids = move_volatile(api, cur)
        if moved is not None:
            cur, applied = moved, applied + ids
    if api == ANTHROPIC_MESSAGES:
        placed = place_breakpoints("anthropic", "/v1/messages", cur, model=model)
        if placed.body is not None:
            cur, applied = placed.body, applied + placed.applied
        if pays_for_1h(head_returns):
            longer, ids = apply_ttl(cur)
            if longer is not None:
                cur, applied = longer, applied + ids
    else:
        if rules == XAI and api == OPENAI_CHAT:
            added, ids = conv_id_header(tenant, api, cur, headers)
            applied += ids
        else:
            keyed, ids = add_cache_key(tenant, api, cur)
            if keyed is not None:
                cur, applied = keyed, applied + ids
        if rules == OPENAI_RULES:
            # 12h only on Responses: Chat usage reports writes without a TTL split, so a 12h write there is unpriceable
            ttl_12h = api == OPENAI_RESPONSES and pays_for_12h(head_returns, write_12h)
            marked, ids = place_openai_breakpoints(api, cur, model=model, ttl_12h=ttl_12h)
            if marked is not None:
                cur, applied = marked, applied + ids
    return Rewrite(cur if cur is not body else None, applied, added)
