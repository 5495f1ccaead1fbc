"""Time elapsed until now, rendered as a duration after a label that says so: "Time since last
message: 3h 12m", "since the last reply: 14 minutes".

:func:`find` adds a ``state`` candidate (shape ``elapsed``) for a duration in seconds, minutes or
hours after a "time since …" / "since (the) last …" label, found at each "since". Such a count grows
with every request, as a clock does.

It does NOT read a bare "5 minutes ago" (prompts show it as often as a format to write, "e.g. '3
hours ago'", as rendered), days or longer, nor judge (:mod:`.judge` drops examples).
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate

_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|[hms])"
#: "Time since last message: 3h 12m", "since the last reply: 14 minutes"
_SINCE_LABEL = re.compile(
    r"(?i)\b(?:time\s+since|since\s+(?:the\s+)?last)\b[^\n:：]{0,30}[:：][ \t]*"
    rf"(?P<v>(?<!\d)\d{{1,4}}[ \t]*{_UNIT}\b(?:[ ,]*(?:and[ \t]+)?\d{{1,4}}[ \t]*{_UNIT}\b)*)"
)


def find(text: str, low: str, out: list[Candidate]) -> None:
    """Durations until now after each "since" label."""
    k = low.find("since")
    while k >= 0:
        m = _SINCE_LABEL.match(text, max(0, k - 5)) or _SINCE_LABEL.match(text, k)
        if m:
            out.append(Candidate("state", *m.span("v"), HIGH, "elapsed"))
        k = low.find("since", k + 5)
