"""Field paths in a JSON value: ``messages[2].content[0]``, ``response_format.json_schema."$defs"``.

One syntax for segments, lint, forks, the miss-reason header and the rewrites: ``[n]`` a list
index, ``.name`` a key of letters, digits, ``_`` and ``-``, any other key double-quoted with
``"`` and ``\\`` backslash-escaped. :class:`JsonPath` is the parsed form (``str`` keys, ``int``
indexes; ``JsonPath.parse(str(p)) == p``); :func:`key_path`, :func:`index_path` and
:func:`join_path` extend a text path without parsing it; :func:`get_path` reads one.

It does NOT mutate a value: :meth:`JsonPath.updated` returns a copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_TOKEN = re.compile(r'\.?([\w-]+)|\.?"((?:[^"\\]|\\.)*)"|\[(\d+)\]', re.S)
_UNESCAPE = re.compile(r"\\(.)", re.S)


def key_path(path: str, name: str) -> str:
    """Text path ``path`` extended by object key ``name``: ``a.b``, or ``a."$defs"`` for a key that is not a plain name."""
    if name.replace("_", "a").replace("-", "a").isalnum():
        part = name
    else:
        part = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{path}.{part}" if path else part


def index_path(path: str, i: int) -> str:
    """Text path ``path`` extended by list index ``i``: ``a[3]``."""
    return f"{path}[{i}]"


def join_path(base: str, sub: str) -> str:
    """Text path ``sub`` read from the value at text path ``base``."""
    if not base:
        return sub
    if not sub:
        return base
    return base + sub if sub.startswith("[") else f"{base}.{sub}"


class JsonPath(tuple):
    """A parsed path: ``JsonPath(("messages", 2, "content"))``; ``str()`` is ``messages[2].content``."""

    __slots__ = ()

    @staticmethod
    def parse(text: str) -> JsonPath:
        """The path a text path names (ValueError when ``text`` is not one)."""
        return _parse(text)

    def __str__(self) -> str:
        text = ""
        for part in self:
            text = index_path(text, part) if isinstance(part, int) else key_path(text, part)
        return text

    def __repr__(self) -> str:
        return f"JsonPath({str(self)!r})"

    def __add__(self, other: tuple) -> JsonPath:
        return JsonPath(tuple.__add__(self, tuple(other)))

    def key(self, name: str) -> JsonPath:
        return JsonPath((*self, name))

    def index(self, i: int) -> JsonPath:
        return JsonPath((*self, i))

    def get(self, value: Any) -> Any:
        """The value at this path, or None when it is not there (a missing key or index, or the wrong type)."""
        for part in self:
            if isinstance(part, int):
                if not isinstance(value, list) or part >= len(value):
                    return None
            elif not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    def updated(self, value: Any, fn: Callable[[Any], Any]) -> Any:
        """A copy of ``value`` with ``fn(old)`` at this path; only the containers along the path
        are copied. Raises (KeyError, IndexError, TypeError) when the path is not there."""
        parents = []
        for part in self:
            parents.append(value)
            value = value[part]
        new = fn(value)
        for part, parent in zip(reversed(self), reversed(parents)):
            copy = dict(parent) if isinstance(parent, dict) else list(parent)
            copy[part] = new
            new = copy
        return new


@lru_cache(maxsize=4096)
def _parse(text: str) -> JsonPath:
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        dotted = text.startswith(".", pos)
        if m is None or dotted != (pos > 0 and m.group(3) is None):  # a key needs its dot, except first
            raise ValueError(f"not a JSON path: {text!r} (at {pos})")
        bare, quoted, idx = m.groups()
        parts.append(
            int(idx) if idx is not None else bare if bare is not None else _UNESCAPE.sub(r"\1", quoted)
        )
        pos = m.end()
    return JsonPath(parts)


def get_path(value: Any, path: str | JsonPath) -> Any:
    """The value at ``path`` (text or parsed) inside ``value``, or None when it is not there."""
    return (path if isinstance(path, JsonPath) else _parse(path)).get(value)
