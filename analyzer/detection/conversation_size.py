"""The size of the conversation so far: ``messages.length``, ``len(history)``, ``num_messages``.

A chat app that tells the model how long the conversation is (``This thread has ${msgs.length}
messages``) renders a counter that grows each turn. :func:`conversation_size` reads a name or a
``len(…)`` call whose object is the conversation's messages, turns or history.

It does NOT judge the size of fixed lists (``tools.length``, ``len(examples)``), nor a bare count
name (``message_count``, judged by :mod:`.names` with the other counters).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: what a conversation's size counts
_CONVERSATION = frozenset("messages msgs history turns replies exchanges".split())
_SIZES = frozenset("length count size".split())
_NUMBER_OF = frozenset("num n number".split())


def conversation_size(
    names: Sequence[str], calls: Sequence[tuple[str, int | None]], words: Callable[[str], list[str]]
) -> str | None:
    """What the expression counts (``messages``), or None when it is no conversation's size."""
    lengths = any(d == "len" for d, _ in calls)
    for name in names:
        ws = words(name)
        if len(ws) >= 2 and ws[-1] in _SIZES and ws[-2] in _CONVERSATION:
            return ws[-2]  # messages.length, history.size
        if len(ws) == 2 and ws[0] in _NUMBER_OF and ws[1] in _CONVERSATION:
            return ws[1]  # num_messages
        if lengths and ws and name != "len" and ws[-1] in _CONVERSATION and "." not in name:
            return ws[-1]  # len(messages), len(chat_history)
    return None
