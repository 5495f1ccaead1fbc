"""Values counted from today: an age, a countdown, the days until or since a date.

A slot or a call named so (``{{ countdown }}``, ``{{age(2010, 6, 28)}}``, ``days_until(launch)``,
``time_ago(post.created)``) changes as the calendar turns, like the date it is counted from.
:func:`from_today` reads a name's words (:func:`.names.words`).

It does NOT read arguments: ``age(…)`` is an age whatever it is given; a bare ``{age}`` slot (a
person's stated age, a character's) is not counted, only a call.
"""

from __future__ import annotations

#: what is counted ("days_until", "years_since", "time_ago")
_UNITS = frozenset("day days week weeks month months year years hour hours time".split())
#: … and from where: a moment ahead of or behind today
_RELATIONS = frozenset("until since left ago remaining".split())
#: a weekday named from this week ("next_wednesday", "{{ this_friday }}", "lastMonday"): a date counted from today
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday weekend".split())
_FROM = frozenset("next last this coming previous upcoming".split())


def from_today(ws: list[str], call: bool = False) -> bool:
    """The words name a value counted from today: "countdown" anywhere, a unit then a relation
    ("days_until"), a weekday after "next" or "last" ("next_wednesday"), or (a call) one ending in "age" (``age(2010, 6, 28)``, ``calculate_age(born)``)."""
    if "countdown" in ws or (call and ws and ws[-1] == "age"):
        return True
    return any(
        (a in _UNITS and b in _RELATIONS) or (a in _FROM and b in _WEEKDAYS) for a, b in zip(ws, ws[1:])
    )
