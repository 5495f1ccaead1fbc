"""``prefixgate serve --config FILE``: named upstreams from a TOML file.

One ``[[upstream]]`` table per upstream (``name``, ``protocol``, ``base_url`` or ``base_urls``,
optional ``rules``, ``prices``, ``auto_cache``, ``routing``, ``health_path``,
``health_interval``), in a file of its own or under ``[tool.prefixgate]`` of a
``pyproject.toml`` (:func:`discover` finds ``./pyproject.toml`` without ``--config``).
Every mistake is one :class:`ConfigFileError`, one line naming the file and the line (found
by scanning the text: ``tomllib`` gives none for values).
It reads one file and builds :class:`~proxy.config.UpstreamSpec` values; it checks nothing
about the network and starts nothing. See docs/providers.md and docs/configuration.md.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from proxy.config import PROTOCOLS, UpstreamSpec

KEYS = (
    "name",
    "protocol",
    "base_url",
    "base_urls",
    "rules",
    "prices",
    "auto_cache",
    "routing",
    "health_path",
    "health_interval",
)
FLAGS = ("auto_cache",)  # the keys that take true / false
LISTS = ("base_urls",)  # the keys that take a list of strings
NUMBERS = ("health_interval",)  # the keys that take a number
REQUIRED = ("name", "protocol")
TOP_LEVEL = {"upstream", "lint"}  # lint: prefixgate lint's own table, beside ours in pyproject.toml
_HEADER = re.compile(r"^\s*\[\[\s*(?P<name>[A-Za-z0-9_.\s\"'-]+?)\s*\]\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[")
_KEY = re.compile(r"^\s*(?P<key>[A-Za-z0-9_-]+)\s*=")
_TOML_POS = re.compile(r"\(at line (\d+), column \d+\)")


class ConfigFileError(ValueError):
    """A config file the proxy refuses; ``str()`` is one line, ``FILE:LINE: what``."""


def _lines(text: str, header: str) -> list[tuple[int, dict[str, int]]]:
    """For each ``[[header]]`` table in order: its header's line and each key's line."""
    tables: list[tuple[int, dict[str, int]]] = []
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        match = _HEADER.match(line)
        if match is not None:
            inside = re.sub(r"[\s\"']", "", match.group("name")) == header
            if inside:
                tables.append((number, {}))
            continue
        if _TABLE.match(line):
            inside = False
            continue
        key = _KEY.match(line)
        if inside and key is not None:
            tables[-1][1].setdefault(key.group("key"), number)
    return tables


def _key_line(text: str, dotted: str) -> int | None:
    """The line of an ``upstream = [...]`` array written inline (no ``[[…]]`` tables)."""
    last = dotted.rsplit(".", 1)[-1]
    for number, line in enumerate(text.splitlines(), 1):
        key = _KEY.match(line)
        if key is not None and key.group("key") == last:
            return number
    return None


def parse(text: str, origin: str, *, pyproject: bool = False) -> tuple[UpstreamSpec, ...]:
    """The upstreams of a config file's text (``origin`` names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        pos = _TOML_POS.search(message)
        line = pos.group(1) if pos else "1"
        raise ConfigFileError(
            f"{origin}:{line}: not valid TOML: {_TOML_POS.sub('', message).strip()}"
        ) from None
    header = "upstream"
    if pyproject:
        data = data.get("tool", {}).get("prefixgate", {})
        header = "tool.prefixgate.upstream"
        if not isinstance(data, dict):
            raise ConfigFileError(f"{origin}:1: [tool.prefixgate] must be a table")
    for key in data:
        if key not in TOP_LEVEL:
            line = _key_line(text, key) or 1
            raise ConfigFileError(
                f"{origin}:{line}: unknown key {key!r} (a config file holds [[upstream]] tables)"
            )
    tables = data.get("upstream", [])
    lines = _lines(text, header)
    fallback = _key_line(text, header) or 1
    if not isinstance(tables, list):
        raise ConfigFileError(f"{origin}:{fallback}: 'upstream' must be an array of tables ([[upstream]])")
    specs: list[UpstreamSpec] = []
    names: dict[str, int] = {}
    for index, table in enumerate(tables):
        at, keys = lines[index] if index < len(lines) else (fallback, {})
        if not isinstance(table, dict):
            raise ConfigFileError(
                f"{origin}:{at}: each upstream must be a table with name, protocol and base_url"
            )
        for key in table:
            if key not in KEYS:
                raise ConfigFileError(
                    f"{origin}:{keys.get(key, at)}: unknown key {key!r} in upstream (expected {', '.join(KEYS)})"
                )
        for key in REQUIRED:
            if key not in table:
                raise ConfigFileError(f"{origin}:{at}: upstream is missing {key!r}")
        if ("base_url" in table) == ("base_urls" in table):
            both = "base_url" in table
            raise ConfigFileError(
                f"{origin}:{keys.get('base_urls', at) if both else at}: upstream "
                + (
                    "gives both 'base_url' and 'base_urls' (one of them)"
                    if both
                    else "is missing 'base_url' (or 'base_urls')"
                )
            )
        for key, value in table.items():
            _check_type(origin, keys.get(key, at), key, value)
        if table.get("base_urls") == []:
            raise ConfigFileError(
                f"{origin}:{keys.get('base_urls', at)}: base_urls must be a non-empty list of URLs"
            )
        name = table["name"]
        if name.lower() in names:
            raise ConfigFileError(
                f"{origin}:{keys.get('name', at)}: duplicate upstream prefix '/{name}' (first at line {names[name.lower()]})"
            )
        names[name.lower()] = keys.get("name", at)
        if name in PROTOCOLS and table["protocol"] != name:
            raise ConfigFileError(
                f"{origin}:{keys.get('protocol', at)}: upstream {name!r} replaces the default one and must keep protocol {name!r}"
            )
        try:
            specs.append(
                UpstreamSpec(
                    name,
                    table["protocol"],
                    table.get("base_url", ""),
                    table.get("rules"),
                    table.get("prices"),
                    auto_cache=table.get("auto_cache", False),
                    line=at,
                    base_urls=tuple(table.get("base_urls", ())),
                    **{k: table[k] for k in ("routing", "health_path", "health_interval") if k in table},
                )
            )
        except ValueError as exc:
            blame = _blame(str(exc), keys, at)
            raise ConfigFileError(f"{origin}:{blame}: {exc}") from None
    return tuple(specs)


def _check_type(origin: str, line: int, key: str, value: Any) -> None:
    """A value of the wrong TOML type: true / false, a list of strings, a number or a string."""
    if key in FLAGS:
        ok, want = isinstance(value, bool), "true or false"
    elif key in LISTS:
        ok, want = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of strings"
    elif key in NUMBERS:
        ok, want = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    else:
        ok, want = isinstance(value, str), "a string"
    if not ok:
        raise ConfigFileError(f"{origin}:{line}: {key} must be {want}, got {value!r}")


def _blame(message: str, keys: dict[str, int], at: int) -> int:
    """The line of the key an :class:`UpstreamSpec` error is about (``base_urls`` before
    ``base_url``, which it contains)."""
    for key, words in (
        ("auto_cache", "auto_cache"),
        ("protocol", "protocol"),
        ("routing", "routing"),
        ("health_path", "health_path"),
        ("health_interval", "health_interval"),
        ("base_urls", "base_urls"),
        ("base_url", "base_url"),
        ("rules", "rules"),
        ("prices", "prices"),
        ("name", "name"),
    ):
        if words in message:
            return keys.get(key, at)
    return at


def load(path: str | Path) -> tuple[UpstreamSpec, ...]:
    """The upstreams of the file at ``path`` (a ``pyproject.toml`` is read at ``[tool.prefixgate]``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(
            f"{path}: cannot read the config file ({type(exc).__name__}: {getattr(exc, 'strerror', None) or exc})"
        ) from None
    return parse(text, str(path), pyproject=path.name == "pyproject.toml")


def discover(cwd: str | Path = ".") -> Path | None:
    """``cwd/pyproject.toml`` when its ``[tool.prefixgate]`` names upstreams, else None."""
    path = Path(cwd) / "pyproject.toml"
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # not ours to judge unless asked: --config names it explicitly
    tool = data.get("tool", {}).get("prefixgate", {}) if isinstance(data.get("tool"), dict) else {}
    return path if isinstance(tool, dict) and "upstream" in tool else None
