"""Findings → text: concise, full, json and github formats (SARIF is :mod:`.sarif`).

- concise: ``file:line:col: CODE message`` (with ``[field]`` for JSON), ruff's shape.
- full: concise plus the source line with a caret, notes and the rule's fix.
- json: a list of finding objects (code, name, message, severity, file, line, column,
  end_line, end_column, field, fixable, fingerprint, notes).
- github: workflow commands (``::error file=…,line=…,col=…::…``) that annotate a PR.
"""

from __future__ import annotations

import json

from analyzer.lint.documents import SourceFile
from analyzer.lint.model import Finding

GITHUB_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _where(f: Finding) -> str:
    return f"{f.file}:{f.line}:{f.col}: {f.code}" + (f" [{f.field}]" if f.field else "")


def concise(findings: list[Finding]) -> str:
    return "\n".join(f"{_where(f)} {f.message}" + (" [*]" if f.rule.fixable else "") for f in findings)


def _source_line(src: SourceFile | None, line: int) -> str | None:
    if src is None:
        return None
    starts = src.line_starts
    if line - 1 >= len(starts):
        return None
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(src.text)
    return src.text[begin:end].rstrip("\r\n")


def full(findings: list[Finding], sources: dict[str, SourceFile]) -> str:
    blocks = []
    for f in findings:
        lines = [f"{_where(f)} {f.rule.name}", f"  {f.message}"]
        text = _source_line(sources.get(f.file), f.line)
        if text is not None:
            lo = max(0, f.col - 61)
            shown = text[lo : lo + 120]
            width = max(1, (f.end_col - f.col) if f.end_line == f.line and f.end_col else 1)
            lines += [
                f"   {f.line:>5} | {shown}",
                "         | " + " " * (f.col - 1 - lo) + "^" * min(width, 120),
            ]
        lines += [f"  note: {n}" for n in f.notes]
        lines.append(f"  help: {f.rule.fix}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def as_json(findings: list[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2, ensure_ascii=False)


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding]) -> str:
    out = []
    for f in findings:
        props = [
            f"title={_escape_prop(f'prefixgate {f.code} ({f.rule.name})')}",
            f"file={_escape_prop(f.file)}",
            f"line={f.line}",
            f"col={f.col}",
        ]
        if f.end_line:
            props += [f"endLine={f.end_line}", f"endColumn={f.end_col}"]
        field = f" [{f.field}]" if f.field else ""
        out.append(
            f"::{GITHUB_LEVEL[f.level]} {','.join(props)}::{_escape_data(f'{f.code}{field} {f.message}')}"
        )
    return "\n".join(out)


def summary(
    findings: list[Finding], suppressed: int = 0, *, errors: int = 0, checked: int | None = None
) -> str:
    """The closing line. Never "All checks passed!" when a file could not be read or none was found."""
    if not findings and errors:
        text = (
            f"No findings in the files that could be read; {errors} input error{'s' if errors != 1 else ''}."
        )
    elif not findings and checked == 0:
        text = "No prompt, JSON or JSONL files found: nothing was checked."
    elif not findings:
        text = "All checks passed!"
    else:
        fixable = sum(f.rule.fixable for f in findings)
        text = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}."
        if fixable:
            text += f"\n[*] {fixable} fixable with `prefixgate lint --fix`."
    if suppressed:
        text += f"\n({suppressed} suppressed by the baseline)"
    return text
