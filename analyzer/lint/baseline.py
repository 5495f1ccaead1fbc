"""Suppression by baseline file: record today's findings, report only new ones later.

A baseline (not inline comments: a comment inside a prompt would itself change the
cached bytes) is a JSON file of finding fingerprints. A fingerprint is the rule, file, JSON
field path and the offending value, never the line, so edits elsewhere keep it valid.
"""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.lint.model import Finding, InputError

VERSION = 1


def write(path: str, findings: list[Finding]) -> None:
    entries = sorted({(f.fingerprint, f.code, f.file, f.field or "", f.message) for f in findings})
    doc = {
        "version": VERSION,
        "tool": "prefixgate lint",
        "findings": [
            {"fingerprint": fp, "code": code, "file": file, "field": field or None, "message": msg}
            for fp, code, file, field, msg in entries
        ],
    }
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read(path: str) -> set[str]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, f"cannot read the baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"the baseline is not valid JSON: {exc}") from None
    if (
        not isinstance(doc, dict)
        or doc.get("version") != VERSION
        or not isinstance(doc.get("findings"), list)
    ):
        raise InputError(path, f"not a prefixgate baseline (expected version {VERSION} and a findings list)")
    return {
        e["fingerprint"]
        for e in doc["findings"]
        if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
    }


def suppress(findings: list[Finding], fingerprints: set[str]) -> tuple[list[Finding], int]:
    kept = [f for f in findings if f.fingerprint not in fingerprints]
    return kept, len(findings) - len(kept)
