"""The linter's vocabulary: a :class:`Rule` (code, name, docs) and a :class:`Finding`.

Severities map to SARIF levels and GitHub annotation kinds: ``high`` → error,
``medium`` → warning, ``low`` → note. This module holds no rule logic.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

LEVELS = {"high": "error", "medium": "warning", "low": "note"}


@dataclass(frozen=True)
class Rule:
    #: "PG001"
    code: str
    #: kebab-case, "time-in-prefix"
    name: str
    #: one line
    summary: str
    #: a str.format template over the finding's fields
    message: str
    why: str
    example: str
    fix: str
    severity: str = "high"
    #: "text" (strings), "file" (raw bytes), "request" (one body), "log" (many)
    scope: str = "text"
    fixable: bool = False
    #: in the default selection; opt-in rules need --select/--extend-select
    default: bool = True

    def __post_init__(self) -> None:
        if not (self.code.startswith("PG") and self.code[2:].isdigit() and len(self.code) == 5):
            raise ValueError(f"rule code must look like PG001, got {self.code!r}")
        if self.name != self.name.lower() or " " in self.name or "_" in self.name:
            raise ValueError(f"rule name must be kebab-case, got {self.name!r}")
        if self.severity not in LEVELS:
            raise ValueError(f"severity must be one of {sorted(LEVELS)}, got {self.severity!r}")
        if self.scope not in ("text", "file", "request", "log"):
            raise ValueError(f"unknown scope {self.scope!r}")

    @property
    def level(self) -> str:
        return LEVELS[self.severity]

    def docs(self) -> str:
        return (
            f"{self.code} {self.name}: {self.summary}\n\nWhat it does\n  {self.summary}.\n\nWhy is this bad?\n  {self.why}\n\n"
            f"Example\n  {self.example}\n\nFix\n  {self.fix}\n"
        )


@dataclass
class Finding:
    rule: Rule
    message: str
    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None
    #: JSON field path, e.g. "messages[0].content"
    field: str | None = None
    #: what makes this finding the same across edits (value, path) for baselines
    key: str = ""
    #: what makes repeats of it across the requests of a log one finding
    group: str = ""
    #: overrides the rule's default
    severity: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def code(self) -> str:
        return self.rule.code

    @property
    def level(self) -> str:
        return LEVELS[self.severity or self.rule.severity]

    @property
    def fingerprint(self) -> str:
        """Stable across unrelated edits: rule, file, field path and the offending value."""
        basis = "\x1f".join(
            (self.rule.code, self.file.replace("\\", "/"), self.field or "", self.key or self.message)
        )
        return hashlib.sha256(basis.encode("utf-8", "replace")).hexdigest()[:32]

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.col, self.rule.code)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.rule.name,
            "message": self.message,
            "severity": self.severity or self.rule.severity,
            "file": self.file,
            "line": self.line,
            "column": self.col,
            "end_line": self.end_line,
            "end_column": self.end_col,
            "field": self.field,
            "fixable": self.rule.fixable,
            "fingerprint": self.fingerprint,
            "notes": self.notes,
        }


class InputError(Exception):
    """A file that could not be read or parsed; carries the file and line for the message."""

    def __init__(self, file: str, message: str, line: int | None = None, col: int | None = None):
        self.file, self.line, self.col, self.message = file, line, col, message
        where = file + (f":{line}" if line else "") + (f":{col}" if line and col else "")
        super().__init__(f"{where}: {message}")
