"""Rule selection: ``--select``/``--ignore`` and ``[tool.prefixgate.lint]`` in pyproject.toml.

Selectors: ``ALL``, a code (``PG001``), a prefix (``PG0``) or a name (``time-in-prefix``); others,
and unknown keys, are usage errors (exit 2). ``--select`` replaces the file's, ``--ignore`` adds;
without ``select`` the defaults run (all but opt-in PG203/PG204); ``extend-select`` adds.
Keys: ``select``, ``extend-select``, ``ignore``, ``exclude``, ``output-format``, ``baseline``.

It does NOT run rules. See docs/lint.md ("Configuration").
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.lint.rules import BY_CODE, BY_NAME

KEYS = {"select", "extend-select", "ignore", "exclude", "output-format", "baseline"}


class ConfigError(ValueError):
    pass


@dataclass
class LintConfig:
    select: list[str] = field(default_factory=lambda: ["DEFAULT"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    output_format: str | None = None
    baseline: str | None = None
    #: the pyproject.toml it came from
    source: str | None = None


def expand(selector: str) -> set[str]:
    token = selector.strip()
    if token.upper() == "ALL":
        return set(BY_CODE)
    if token.upper() == "DEFAULT":
        return {code for code, m in BY_CODE.items() if m.RULE.default}
    if token in BY_NAME:
        return {BY_NAME[token]}
    up = token.upper()
    matched = {code for code in BY_CODE if code.startswith(up)} if up.startswith("PG") else set()
    if not matched:
        raise ConfigError(
            f"unknown rule selector {selector!r} (codes PG001…PG303, names, prefixes such as PG0, ALL or DEFAULT)"
        )
    return matched


def resolve(select: list[str], ignore: list[str], extend: list[str] = ()) -> set[str]:
    chosen: set[str] = set()
    for s in [*select, *extend]:
        chosen |= expand(s)
    for s in ignore:
        chosen -= expand(s)
    return chosen


def find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _list(value, key: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: [tool.prefixgate.lint] {key} must be a list of strings")


def load_config(start: Path | None = None) -> LintConfig:
    path = find_pyproject((start or Path.cwd()).resolve())
    if path is None:
        return LintConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    section = data
    for key in ("tool", "prefixgate", "lint"):
        if not isinstance(section, dict):
            break  # `prefixgate = 1`: not a table, reported below
        section = section.get(key)
        if section is None:
            return LintConfig()
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.prefixgate.lint] must be a table")
    unknown = set(section) - KEYS
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) in [tool.prefixgate.lint]: {', '.join(sorted(unknown))} (known: {', '.join(sorted(KEYS))})"
        )
    cfg = LintConfig(source=str(path))
    if "select" in section:
        cfg.select = _list(section["select"], "select", str(path))
    cfg.extend_select = _list(section.get("extend-select", []), "extend-select", str(path))
    cfg.ignore = _list(section.get("ignore", []), "ignore", str(path))
    cfg.exclude = _list(section.get("exclude", []), "exclude", str(path))
    fmt = section.get("output-format")
    if fmt is not None and not isinstance(fmt, str):
        raise ConfigError(f"{path}: output-format must be a string")
    cfg.output_format = fmt
    base = section.get("baseline")
    if base is not None:
        if not isinstance(base, str):
            raise ConfigError(f"{path}: baseline must be a path string")
        cfg.baseline = str(path.parent / base)
    for s in cfg.select + cfg.extend_select + cfg.ignore:
        try:
            expand(s)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return cfg
