"""OpenAI's caching rules per model generation, keyed by model name (Azure OpenAI the same).

Two generations: before GPT-5.6 (automatic from 1,024 tokens, 128-token steps, free writes) and
GPT-5.6 and later (breakpoints only, 1.25x writes). The contract and the assumptions where the
sources are silent (which the emulator follows) are listed in the comment block below.

It does NOT know prices (:mod:`analyzer.pricing`) or keep state. See docs/providers.md.
"""

# OpenAI contract, two generations (OpenAI, "Prompt caching" guide; the ``openai`` SDK's
# ``types/chat/completion_create_params.py``, ``types/responses/response_create_params.py``,
# ``types/completion_usage.py``, ``types/responses/response_usage.py``; checked 2026-12):
#
# - **Before GPT-5.6** (gpt-4o … gpt-5.5, o-series): any prompt of at least 1,024 tokens is
#   cached automatically and read in 128-token steps; writes are free; no breakpoints.
# - **GPT-5.6 and later** (gpt-5.6-sol / -terra / -luna, June 2026, and every later family):
#   entries are written only at breakpoints — one implicit breakpoint at the end of the newest
#   message (unless ``prompt_cache_options.mode`` is ``"explicit"``) and content parts marked
#   ``"prompt_cache_breakpoint": {"mode": "explicit"[, "ttl": "30m" | "12h"]}``. Implicit mode
#   writes the implicit one and the latest 3 explicit ones; explicit mode the latest 4; the
#   latest 80 breakpoints are considered when matching; a prefix matches exactly at a
#   breakpoint (no 128-token rounding, no fallback to a shorter unmarked prefix). Writes bill
#   1.25× input (``cache_write_tokens``), reads 0.1×. ``prompt_cache_options.ttl`` is a minimum
#   lifetime: ``30m`` (default; the only value Chat Completions takes) or ``12h`` (Responses).
#
# Assumptions where the sources are silent (the emulator, :mod:`proxy.emulator`, follows them):
#
# - **Names.** A name's generation is its ``gpt-MAJOR[.MINOR]`` version, after any ``vendor/``
#   prefix (``openai/``, ``azure/``; a dotless multi-digit version is Azure's spelling, ``gpt-35-turbo``
#   = 3.5): 5.6 or above takes the newest rules known (so ``gpt-5.7``,
#   ``gpt-6``, ``gpt-6.1-terra`` are 5.6-style until a newer family is added here). Any other
#   name (``o4-mini``, ``gpt-4o``, ``chatgpt-4o-latest``, ``gpt-oss-120b``, an Azure deployment
#   name) takes the rules before 5.6.
# - **Minimum.** 1,024 tokens still: a breakpoint whose prefix is shorter is neither written nor
#   matched (the guide's "prompts 1024 tokens or longer" says nothing of 5.6).
# - **Where a breakpoint sits.** At the end of the message (Responses: input item) that holds the
#   marked part: prefixgate's segments are whole messages, so a marker on a part before the
#   message's last counts at the message's end (the SDK says a marker ends the prefix exactly at
#   its part), and several marked parts of one message are one breakpoint (one of the 4 writes,
#   one of the 80 considered), with the longest of their TTLs.
# - **Candidates.** The positions a request can match at are its explicit markers and the end of
#   each of its messages (where an earlier turn's implicit breakpoint was written); the latest 80
#   of them are looked up, the longest cached one is read.
# - **Writes.** A written breakpoint that was not read stores its prefix; the tokens billed as
#   writes are those between the longest prefix read and the furthest breakpoint written; the
#   tokens after it bill as plain input. A breakpoint's TTL is its own ``ttl``, else the request's.
# - **Older models** answer a body carrying ``prompt_cache_options`` or a
#   ``prompt_cache_breakpoint`` with a 400 (``unsupported_parameter``), as write-ups of GPT-5.5
#   report; so prefixgate never sends one there.

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_TOKENS = 1024
#: before 5.6: cached lengths are 1024 + k·128
STEP_TOKENS = 128
#: breakpoints written per request (the implicit one counts)
MAX_WRITES = 4
#: breakpoints looked up when matching
MAX_CONSIDERED = 80
#: 5.6+: a cache write costs 1.25× the input rate
WRITE_MULTIPLIER = 1.25
READ_MULTIPLIER = 0.1
TTL_S = {"30m": 1800.0, "12h": 12 * 3600.0}
DEFAULT_TTL = "30m"
#: prompt_cache_options.ttl on Chat Completions
CHAT_TTLS = ("30m",)
#: on Responses (a breakpoint's own ttl takes either on both APIs)
RESPONSES_TTLS = ("30m", "12h")
BREAKPOINT_KEY = "prompt_cache_breakpoint"
OPTIONS_KEY = "prompt_cache_options"

_VERSION = re.compile(r"^gpt-(\d+)(?:\.(\d+))?(?![\d.])")


@dataclass(frozen=True, slots=True)
class Generation:
    """One family's caching contract."""

    #: "gpt-4o..gpt-5.5" | "gpt-5.6+"
    name: str
    #: the first version it covers
    since: tuple[int, int]
    #: entries only at breakpoints, writes billed
    breakpoints: bool
    #: cache write price over input (1.0: free writes, billed as input)
    write_multiplier: float


BEFORE_5_6 = Generation("gpt-4o..gpt-5.5", (0, 0), False, 1.0)
GPT_5_6 = Generation("gpt-5.6+", (5, 6), True, WRITE_MULTIPLIER)
#: newest first; a name newer than the newest takes the newest
GENERATIONS = (GPT_5_6, BEFORE_5_6)


def version(model: str | None) -> tuple[int, int] | None:
    """``(major, minor)`` of a ``gpt-MAJOR[.MINOR]…`` name (vendor prefix and case ignored), else None."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    m = _VERSION.match(name)
    if m is None:
        return None
    major, minor = m.group(1), m.group(2)
    if minor is None and len(major) > 1:  # Azure spells versions without the dot: gpt-35-turbo is GPT-3.5
        major, minor = major[0], major[1:]
    return int(major), int(minor or 0)


def generation(model: str | None) -> Generation:
    """The rules ``model`` follows (see the module docstring for unknown names)."""
    v = version(model)
    if v is None:
        return BEFORE_5_6
    return next(g for g in GENERATIONS if v >= g.since)


def uses_breakpoints(model: str | None) -> bool:
    """True for GPT-5.6 and later: caching only at breakpoints, writes billed."""
    return generation(model).breakpoints
