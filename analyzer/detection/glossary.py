"""A literal time or date that restates a quoted phrase's own reading: an illustration, not a value.

``- "mañana a las 10am" = día siguiente a la fecha actual, a las 10:00 a.m.`` teaches how to read
a user's phrase; the ``10:00 a.m.`` after the ``=`` only restates the ``10am`` of the phrase.
:func:`restates_quote` tells such a value: on a line that maps a quoted phrase naming a number
(``"…" =``, ``"…" →``, ``"…" means``, ``"…":``) to its reading, after the mapping.

It does NOT read slots (``- "domani" = {TOMORROW_DATE}`` stays judged by its name) nor phrases without digits.
"""

from __future__ import annotations

import re

#: a quoted phrase naming a number, then its reading: = → -> ⇒ : means / significa / bedeutet / signifie
_MAPPING = re.compile(
    r"""[ \t]*(?:[-*•][ \t]+|\d+[.)][ \t]+)?(?P<q>["“«'„])(?P<phrase>[^"”»'\n]{1,60})["”»'“][ \t]*"""
    r"(?:=|→|->|⇒|:|\bmeans\b|\bsignifica\b|\bbedeutet\b|\bsignifie\b|\bè\b)"
)


def restates_quote(text: str, start: int) -> bool:
    """The value at ``start`` stands after the mapping of a quoted phrase that names a number."""
    m = _MAPPING.match(text, text.rfind("\n", 0, start) + 1)
    return bool(m and m.end() <= start and any(ch.isdigit() for ch in m.group("phrase")))
