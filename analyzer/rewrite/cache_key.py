"""``safe`` for OpenAI: a ``prompt_cache_key`` so one app's requests meet on one cache machine.

When the client sent none, sets ``pg-`` + 32 hex digits of a keyed hash of the tenant and the
request's head with its volatile values masked, so one app keeps one key while its prompt
carries a clock. :func:`head_key` is the same hash, also used to follow a head's reuse (TTL
choices). xAI (``x-grok-conv-id`` header on Chat, :func:`conv_id_header`) and Mistral get the
same key in their own spelling.

It does NOT touch a key or header the client set, nor change anything but that one field (or
header). See docs/rewrite.md ("A routing key").
"""

from __future__ import annotations

from typing import Any

import orjson
import xxhash

from .movable import movable

PROMPT_CACHE_KEY = "prompt-cache-key"
XAI_CONV_ID = "xai-conv-id"
XAI_CONV_HEADER = "x-grok-conv-id"


def _masked(text: str) -> str:
    out, at = [], 0
    for s in movable(text):
        out.append(text[at : s.start])
        out.append("\0")
        at = s.end
    out.append(text[at:])
    return "".join(out)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def head_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The head's prompt texts: Anthropic's system, Responses' instructions, or the leading
    system/developer messages of Chat Completions."""
    if api == "anthropic-messages":
        return _texts(body.get("system"))
    if api == "openai-responses":
        return _texts(body.get("instructions"))
    texts: list[str] = []
    for m in body.get("messages") or []:
        if not (isinstance(m, dict) and m.get("role") in ("system", "developer")):
            break
        texts += _texts(m.get("content"))
    return texts


def head_key(tenant: str, api: str, body: dict[str, Any]) -> str:
    """A hash (32 hex digits) of the tenant and the head with its volatile values masked:
    the same for every request of one app of one tenant, whatever its clock says. Tools
    count with their keys sorted and in name order, as the ``safe`` rewrite sends them."""
    h = xxhash.xxh3_128()
    h.update(tenant.encode("utf-8", "surrogatepass") + b"\0")
    tools = body.get("tools")
    for tool in (
        sorted(orjson.dumps(t, option=orjson.OPT_SORT_KEYS) for t in tools)
        if isinstance(tools, list)
        else [orjson.dumps(tools)]
    ):
        h.update(tool + b"\0")
    for text in head_texts(api, body):
        h.update(b"\0" + _masked(text).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def cache_key_for(tenant: str, api: str, body: dict[str, Any]) -> str:
    return "pg-" + head_key(tenant, api, body)


def add_cache_key(tenant: str, api: str, body: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    if api not in ("openai-chat", "openai-responses") or "prompt_cache_key" in body:
        return None, []
    return {**body, "prompt_cache_key": cache_key_for(tenant, api, body)}, [PROMPT_CACHE_KEY]


def conv_id_header(
    tenant: str, api: str, body: dict[str, Any], sent: Any = ()
) -> tuple[dict[str, str], list[str]]:
    """xAI Chat Completions: ``{"x-grok-conv-id": key}`` unless ``sent`` (the client's header
    names, lower case, or a case-insensitive mapping) already holds one."""
    if api != "openai-chat" or XAI_CONV_HEADER in sent:
        return {}, []
    return {XAI_CONV_HEADER: cache_key_for(tenant, api, body)}, [XAI_CONV_ID]
