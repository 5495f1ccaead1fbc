"""Byte sizes written by people: ``32MiB``, ``512 KiB``, ``80GB``, ``1,024``, ``3.35TB/s``.

One parser for every flag that takes a size (``serve --max-body``/``--max-header-size``,
``kv --gpu-memory``/``--weights``/``--bandwidth``). Units are case-insensitive: ``B``;
``K``/``KB``, ``M``/``MB``, ``G``/``GB``, ``T``/``TB`` are decimal (``80GB`` = 80·10⁹, as GPU
and disk makers count); ``KiB``, ``MiB``, ``GiB``, ``TiB`` (or ``Ki`` …) are binary. No unit
means bytes. Commas and underscores between digits are ignored, a space may stand before the
unit, and ``1e9`` is a plain number where the caller allows exponents.

This module only parses; what range a size must fall in is each caller's to check.
"""

from __future__ import annotations

import re

KIB = 1024
MIB = 1024**2
GIB = 1024**3

_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": KIB,
    "MIB": MIB,
    "GIB": GIB,
    "TIB": 1024**4,
}
_SIZE = re.compile(r"(?i)(\d+(?:\.\d*)?|\.\d+)(?:e(\d+))?\s*([kmgt]i?b?|b)?")
_PER_SECOND = re.compile(r"(?i)(/s|ps)$")


def parse_bytes(
    text: str,
    *,
    per_second: bool = False,
    exponent: bool = True,
    hint: str = "examples: 80GB, 24GiB, 3.35TB/s",
) -> float:
    """'80GB' → 80e9, '80GiB' → 80·2³⁰, '3.35TB/s' → 3.35e12 (with ``per_second``: a trailing
    ``/s`` or ``ps`` is dropped), '1e9' → 1e9 (unless ``exponent`` is False). ``hint`` ends the
    ValueError's message: ``not a size: '…' (<hint>)``."""
    raw = str(text).strip().replace(",", "").replace("_", "")
    if per_second:
        raw = _PER_SECOND.sub("", raw)
    m = _SIZE.fullmatch(raw)
    if not m or (m.group(2) and not exponent):
        raise ValueError(f"not a size: {text!r} ({hint})")
    unit = (m.group(3) or "").upper()
    if unit and not unit.endswith("B"):
        unit += "B"
    value = float(m.group(1)) * (10 ** int(m.group(2)) if m.group(2) else 1)
    return value * _UNITS[unit]
