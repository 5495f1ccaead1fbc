"""A candidate span: what one shape found, before it is judged (:mod:`.judge`).

It does NOT find or decide anything; :mod:`.shapes`, :mod:`.dates` and :mod:`.session` make them.
"""

from __future__ import annotations

from dataclasses import dataclass

HIGH, MEDIUM, LOW = "high", "medium", "low"
#: a placeholder's shape when its name says it is a setting (``{time_zone}``): never volatile
SETTING = "\x00setting"
#: a strftime format in the text ("当前日期: %Y-%m-%d"): the app renders the clock into it
STRFTIME = "\x00strftime"


@dataclass(slots=True)
class Candidate:
    kind: str
    start: int
    end: int
    severity: str
    #: what the shape alone says: "timestamp", "seconds", "epoch-ms", "labelled-id", a placeholder's verdict …
    shape: str = ""
    #: a placeholder's expression; an id's label
    expr: str = ""
