"""JavaScript/TypeScript: an expression over the items of a chat history or another content list mapped
into a prompt (``chats.map(chat => `【${chat.sender.nickname}】 ${formatDate(new Date(chat.time))}`)``).

:func:`content_item` says an expression is such an iteration (``.map`` / ``.forEach`` / ``.filter`` …
over a collection of past messages, records or documents) or lies inside its callback: each item's own
fields, the request's content, not a value rendered per request. :func:`fixed_choice` says a
``cond ? "…" : "…"`` yields one of two texts written out, no value.

It does NOT judge anything else (:mod:`.javascript`).
"""

from __future__ import annotations

import re

#: the array methods whose callback gets one item at a time
_ITERATORS = frozenset("map forEach flatMap filter reduce some every find findLast".split())
#: a collection of content: past messages, log records, documents found for the request
_CONTENT_LIST = re.compile(
    r"(?i)(?:chats?|messages?|msgs|history|histories|conversations?|logs?|records|results|docs|documents|"
    r"posts|comments|replies|entries|turns|transcripts?)$"
)


def content_item(f, node) -> bool:
    """``node`` lies inside an iteration callback over a content list, or is such an iteration (see the
    module): what it renders is the list's items."""
    p = node
    while p is not None:
        if p.type == "call_expression" and _iterates_content(f, p):
            return True
        p = p.parent
    while node is not None and node.type == "call_expression":  # chats.map(…).join("\n"): down the chain
        if _iterates_content(f, node):
            return True
        fn = node.child_by_field_name("function")
        node = fn.child_by_field_name("object") if fn is not None and fn.type == "member_expression" else None
    return False


def _iterates_content(f, call) -> bool:
    fn = call.child_by_field_name("function")
    prop = fn.child_by_field_name("property") if fn is not None and fn.type == "member_expression" else None
    if prop is None or f.src(prop) not in _ITERATORS:
        return False
    collection = f.src(fn.child_by_field_name("object")).rsplit(".", 1)[-1].strip()
    return bool(_CONTENT_LIST.search(collection))


def fixed_choice(node) -> bool:
    """A ``cond ? "…" : "…"`` whose both outcomes are literals with no interpolation."""
    ends = [node.child_by_field_name(k) for k in ("consequence", "alternative")]
    return all(
        b is not None and b.type in ("string", "template_string") and b"${" not in b.text for b in ends
    )
