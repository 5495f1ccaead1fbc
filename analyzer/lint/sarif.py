"""Findings → SARIF 2.1.0, the shape GitHub code scanning accepts.

One run; ``tool.driver.rules`` lists every selected rule (id, name, short and full
description, help as text and markdown, default level); each result has ruleId/ruleIndex,
level, message, a physical location (URI relative to the working directory, or an absolute
``file://`` URI for files outside it; 1-based region) plus the JSON field
path as a logical location, and ``partialFingerprints`` so alerts follow the finding
across edits. Input errors become tool execution notifications. Validated in the tests
against the official schema (tests/fixtures/sarif-schema-2.1.0.json, oasis-tcs/sarif-spec).
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import quote

from analyzer.lint.model import LEVELS, Finding, InputError, Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/prefixgate/prefixgate"


def _artifact(path: str) -> dict:
    """A URI relative to %SRCROOT% (the working directory) for files under it; an absolute
    ``file://`` URI for anything outside, never a ``../`` path that climbs out of the root."""
    try:
        rel = os.path.relpath(path) if os.path.isabs(path) else os.path.normpath(path)
    except ValueError:  # another drive (Windows)
        rel = None
    if rel is None or rel == ".." or rel.startswith(".." + os.sep):
        return {"uri": Path(path).resolve().as_uri()}
    return {"uri": quote(rel.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def _tool_version() -> str:
    try:
        return version("prefixgate")
    except PackageNotFoundError:
        return "0.0.0"


def _rule(rule: Rule) -> dict:
    markdown = f"**{rule.summary}**\n\n**Why is this bad?** {rule.why}\n\n**Example:** `{rule.example}`\n\n**Fix:** {rule.fix}"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": f"{rule.why}\nExample: {rule.example}\nFix: {rule.fix}", "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["prompt-caching", rule.scope],
            "precision": "high" if rule.severity == "high" else "medium",
        },
    }


def _result(f: Finding, index: int) -> dict:
    region = {"startLine": f.line, "startColumn": f.col}
    if f.end_line:
        region.update(endLine=f.end_line, endColumn=max(f.end_col or 1, 1))
    location: dict = {"physicalLocation": {"artifactLocation": _artifact(f.file), "region": region}}
    if f.field:
        location["logicalLocations"] = [{"fullyQualifiedName": f.field, "kind": "member"}]
    text = f.message + ("".join(f"\n{n}" for n in f.notes) if f.notes else "")
    return {
        "ruleId": f.code,
        "ruleIndex": index,
        "level": f.level,
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"prefixgate/v1": f.fingerprint},
    }


def _notification(err: InputError) -> dict:
    note: dict = {"level": "error", "message": {"text": err.message}}
    phys: dict = {"artifactLocation": _artifact(err.file)}
    if err.line:
        phys["region"] = {"startLine": err.line, **({"startColumn": err.col} if err.col else {})}
    note["locations"] = [{"physicalLocation": phys}]
    return note


def to_sarif(findings: list[Finding], rules: list[Rule], errors: list[InputError]) -> dict:
    index = {r.code: i for i, r in enumerate(rules)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "prefixgate",
                        "informationUri": INFO_URI,
                        "version": _tool_version(),
                        "rules": [_rule(r) for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",  # columns count characters, not UTF-16 units (SARIF's default)
                "originalUriBaseIds": {
                    "%SRCROOT%": {"description": {"text": "the directory prefixgate lint ran in"}}
                },
                "invocations": [
                    {
                        "executionSuccessful": not errors,
                        "toolExecutionNotifications": [_notification(e) for e in errors],
                    }
                ],
                "results": [_result(f, index[f.code]) for f in findings],
            }
        ],
    }
