"""The size of the conversation so far: ``messages.length``, ``len(history)``, ``num_messages``.

A chat app that tells the model how long the conversation is (``This thread has ${msgs.length}
messages``) renders a counter that grows each turn. :func:`conversation_size` reads a name or a
``len(…)`` call whose object is the conversation's messages, turns or history.

It does NOT judge the size of fixed lists (``tools.length``, ``len(examples)``), nor a bare count
name (``message_count``, judged by :mod:`.names` with the other counters).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from analyzer.detection.vocab import SETTING

#: what a conversation's size counts
_CONVERSATION = frozenset("messages msgs history turns replies exchanges".split())
_SIZES = frozenset("length count size".split())
_NUMBER_OF = frozenset("num n number".split())
#: words that may stand before the counted one: the conversation itself, not a fixed list of it
_OF_CONVERSATION = frozenset(
    "chat conversation thread session past previous prior all self state info".split()
)


def _of_conversation(ws: list[str], at: int) -> bool:
    """ws[at] is a conversation word and every word before it qualifies the conversation."""
    return ws[at] in _CONVERSATION and all(w in _OF_CONVERSATION for w in ws[:at])


def conversation_size(
    names: Sequence[str], calls: Sequence[tuple[str, int | None]], words: Callable[[str], list[str]]
) -> str | None:
    """What the expression counts (``messages``), or None when it is no conversation's size."""
    lengths = {d for d, _ in calls} >= {"len"}
    for name in names:
        if name.isupper():
            continue  # MAX_HISTORY_SIZE, len(SYSTEM_MESSAGES): a constant
        ws = words(name)
        if set(ws) & SETTING:
            continue  # max_history_size: a setting
        if "." in name and len(ws) >= 2 and ws[-1] in _SIZES and _of_conversation(ws[:-1], len(ws) - 2):
            return ws[-2]  # messages.length, thread.messages.length (history_size is a setting)
        if len(ws) == 2 and ws[0] in _NUMBER_OF and ws[1] in ("messages", "msgs"):
            return ws[1]  # num_messages (num_turns is as often the turns to simulate: a setting)
        if lengths and ws and "." not in name and _of_conversation(ws, len(ws) - 1):
            return ws[-1]  # len(messages), len(chat_history)
    return None
