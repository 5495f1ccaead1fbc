"""Run the selected rules over loaded files and return sorted findings.

Prompt files, source files (their prompt-like literals) and each request body are checked
by the ``text``/``request`` rules, each prompt or JSON file once by the ``file`` rules (a
source file's bytes are code, not a prompt), and every file with more than one request by the ``log``
rules. In a log the same finding repeats on every request (a timestamp in the system
prompt is in all of them), so repeats of one rule at one field path for one cause are
collapsed into their first occurrence with a count and the lines.

This module prints nothing and reads no file (see :mod:`.inputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from analyzer.lint.doc import Doc
from analyzer.lint.inputs import Loaded
from analyzer.lint.model import Finding, InputError
from analyzer.lint.rules import MODULES


def collapse(findings: list[Finding]) -> list[Finding]:
    firsts: dict[tuple, tuple[Finding, list[int]]] = {}
    for f in findings:
        key = (f.code, f.field, f.group or f.key)
        if key in firsts:
            firsts[key][1].append(f.line)
        else:
            firsts[key] = (f, [])
    out = []
    for first, more in firsts.values():
        if more:
            shown = ", ".join(str(n) for n in more[:5]) + (", …" if len(more) > 5 else "")
            first.notes.append(f"and {len(more)} more request(s) in this file (lines {shown})")
            first.message += f" (+{len(more)} more requests)"
        out.append(first)
    return out


def _guarded(loaded: Loaded, module, arg, path: str) -> list[Finding]:
    """A rule's findings; a crash in a rule is reported as an error on that file, not a traceback."""
    try:
        return list(module.check(arg))
    except Exception as exc:  # noqa: BLE001 — any rule bug on odd input must name the file, never print a traceback
        loaded.errors.append(
            InputError(path, f"{module.RULE.code} could not check this file ({type(exc).__name__}: {exc})")
        )
        return []


def _unanalysed(path: str, exc: Exception) -> InputError:
    return InputError(path, f"could not analyse this text ({type(exc).__name__}: {exc})")


def run(loaded: Loaded, codes: Iterable[str], advance: Callable[[], None] | None = None) -> list[Finding]:
    """Every finding of the selected rules over ``loaded``; ``advance`` is called at each file."""
    selected = [m for m in MODULES if m.RULE.code in set(codes)]
    by_scope = {
        scope: [m for m in selected if m.RULE.scope == scope] for scope in ("text", "request", "file", "log")
    }
    doc_rules = by_scope["text"] + by_scope["request"]
    findings: list[Finding] = []
    for src in loaded.files:
        if advance is not None:
            advance()
        if src.kind != "source":
            for m in by_scope["file"]:
                findings.extend(_guarded(loaded, m, src, src.path))
        reqs = loaded.requests.get(src.path)
        if reqs is None:
            if doc_rules:
                try:
                    doc = Doc.for_source(src) if src.kind == "source" else Doc.for_text(src)
                except InputError as exc:
                    loaded.errors.append(exc)
                    continue
                except (
                    Exception
                ) as exc:  # a detector fault on a text it did not foresee: an input error, no crash
                    loaded.errors.append(_unanalysed(src.path, exc))
                    continue
                for m in doc_rules:
                    findings.extend(_guarded(loaded, m, doc, src.path))
            continue
        per_file: list[Finding] = []
        if doc_rules:
            for req in reqs:
                try:
                    doc = Doc.for_request(req)
                except Exception as exc:
                    loaded.errors.append(_unanalysed(src.path, exc))
                    continue
                for m in doc_rules:
                    per_file.extend(_guarded(loaded, m, doc, src.path))
        findings.extend(collapse(per_file) if len(reqs) > 1 else per_file)
        if len(reqs) > 1:
            for m in by_scope["log"]:
                findings.extend(_guarded(loaded, m, reqs, src.path))
    findings.sort(key=Finding.sort_key)
    return findings
