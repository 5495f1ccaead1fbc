"""What one ``analyze`` pass counts: hit-rate :class:`Totals` (all, and per provider) and one
:class:`ForkStat` per field where requests fork.

They only hold counts (:mod:`analyzer.logs.analysis` fills them, :mod:`analyzer.logs.report`
reads them). See docs/analyze.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Totals:
    requests: int = 0
    input_tokens: int = 0
    allowed_tokens: int = 0
    with_usage: int = 0
    usage_input_tokens: int = 0
    cached_tokens: int = 0
    allowed_with_usage: int = 0


@dataclass
class ForkStat:
    field: str
    kind: str
    where: str
    count: int = 0
    #: where in the field's string the cause starts → requests
    offsets: Counter = field(default_factory=Counter)
    example: str = ""
