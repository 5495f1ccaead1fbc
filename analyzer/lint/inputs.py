"""Command-line paths → source files and requests, with every unreadable thing reported.

Paths are files, directories (recursive; hidden folders, ``node_modules`` and virtualenvs
skipped) or globs; the suffix decides the reading (``.json`` bodies, ``.jsonl``/``.ndjson``
logs, source code, else prompt text). :func:`load_stdin` reads one prompt or body (JSON if it
parses). Unreadable files, bad UTF-8/JSON/JSONL become :class:`~analyzer.lint.model.InputError`
naming file and line, and the rest is still read.

It does NOT raise on bad input; non-request JSON found by a scan (``package.json``) is skipped,
one named on the command line is an error. See docs/lint.md ("What it reads").
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer.jsonpath import index_path
from analyzer.lint.documents import BOM, Request, SourceFile, messages_array, request_from
from analyzer.lint.model import InputError
from analyzer.lint.sources import SOURCE_SUFFIXES

TEXT_SUFFIXES = {
    ".txt",
    ".md",
    ".markdown",
    ".prompt",
    ".j2",
    ".jinja",
    ".jinja2",
    ".tmpl",
    ".tpl",
    ".mustache",
    ".hbs",
    ".liquid",
}
JSON_SUFFIXES = {".json"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
SKIP_DIRS = {"node_modules", "__pycache__", "venv", ".venv", "site-packages"}


@dataclass
class Loaded:
    files: list[SourceFile] = field(default_factory=list)
    #: by file path
    requests: dict[str, list[Request]] = field(default_factory=dict)
    errors: list[InputError] = field(default_factory=list)


def _kind(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    return "source" if suffix in SOURCE_SUFFIXES else "text"


def discover(
    paths: list[str], exclude: list[str] | None = None
) -> tuple[list[tuple[str, bool]], list[InputError]]:
    """(path, named_explicitly) for each file to lint, in a stable order, and path errors."""
    exclude = exclude or []
    found: list[tuple[str, bool]] = []
    errors: list[InputError] = []
    seen: set[str] = set()

    def add(p: str, explicit: bool) -> None:
        norm = os.path.normpath(p)
        if norm in seen or any(
            fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(os.path.basename(norm), pat) for pat in exclude
        ):
            return
        seen.add(norm)
        found.append((norm, explicit))

    for raw in paths:
        if os.path.isdir(raw):
            for root, dirs, files in os.walk(raw):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                for name in sorted(files):
                    if (
                        Path(name).suffix.lower()
                        in TEXT_SUFFIXES | JSON_SUFFIXES | JSONL_SUFFIXES | SOURCE_SUFFIXES
                    ):
                        add(os.path.join(root, name), False)
        elif os.path.exists(raw) or os.path.islink(raw):
            add(raw, True)
        elif any(ch in raw for ch in "*?["):
            matches = sorted(glob.glob(raw, recursive=True))
            if not matches:
                errors.append(InputError(raw, "no file matches this pattern"))
            for m in matches:
                if os.path.isfile(m):
                    add(m, True)
        else:
            errors.append(InputError(raw, "no such file or directory"))
    return found, errors


def read_source(path: str) -> SourceFile:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    return source_from_bytes(path, data)


def source_from_bytes(path: str, data: bytes, kind: str | None = None) -> SourceFile:
    has_bom = data.startswith(BOM.encode())
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, f"not UTF-8 text (byte {exc.start})", line) from None
    return SourceFile(path, data, text[1:] if has_bom else text, has_bom, kind or _kind(path))


def _json_error(
    src: SourceFile, exc: json.JSONDecodeError, line_base: int = 0, what: str = "invalid JSON"
) -> InputError:
    return InputError(src.path, f"{what}: {exc.msg}", line_base + exc.lineno, exc.colno)


def read_requests(src: SourceFile, explicit: bool, errors: list[InputError]) -> list[Request] | None:
    """Requests in a JSON/JSONL file; None when a scanned JSON file is not a request at all."""
    out: list[Request] = []
    if src.kind == "json":
        try:
            value = json.loads(src.text)
        except json.JSONDecodeError as exc:
            errors.append(_json_error(src, exc))
            return []
        except RecursionError:
            errors.append(InputError(src.path, "JSON nested too deeply to read", 1))
            return []
        items = (
            list(enumerate(value))
            if isinstance(value, list) and not messages_array(value)
            else [(None, value)]
        )
        for i, item in items:
            req = request_from(
                src,
                item,
                line=1,
                raw=src.text,
                raw_base=0,
                base_path="" if i is None else index_path("", i),
                index=len(out),
            )
            if req is not None:
                out.append(req)
        if not out:
            if not explicit or _prompt_config(value):
                return None
            errors.append(
                InputError(src.path, "no request body here (expected messages, input or prompt)", 1)
            )
        return out
    base = 0
    for lineno, line in enumerate(src.text.splitlines(keepends=True), start=1):
        stripped = line.strip()
        if stripped:
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(InputError(src.path, f"line is not JSON: {exc.msg}", lineno, exc.colno))
            except RecursionError:
                errors.append(InputError(src.path, "line is JSON nested too deeply to read", lineno))
            else:
                req = request_from(
                    src, value, line=lineno, raw=line, raw_base=base, base_path="", index=len(out)
                )
                if req is None:
                    errors.append(
                        InputError(
                            src.path, "line is no request body (expected messages, input or prompt)", lineno
                        )
                    )
                else:
                    out.append(req)
        base += len(line)
    return out


#: where a prompt template stored as JSON keeps its text (LangChain hub, Prompty, prompt configs, an app's
#: config nesting one, an n8n workflow's agent node: ``parameters.options.systemMessage``)
TEMPLATE_KEYS = frozenset(
    "template system_prompt system_message instructions prompt_template systemMessage systemPrompt".split()
)
#: how many JSON values :func:`_prompt_config` looks at, how deep
_CONFIG_NODES, _CONFIG_DEPTH = 5000, 8


def _loads(text: str):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _prompt_config(value) -> bool:
    """A JSON object (or list of them) holding a prompt template's text under a template key, at the top
    or nested (``{"services": {"gemini": {"system_prompt": …}}}``), looked for breadth-first and bounded."""
    queue, seen = [(value, 0)], 0
    while queue and seen < _CONFIG_NODES:
        item, depth = queue.pop(0)
        seen += 1
        if isinstance(item, dict):
            if any(isinstance(item.get(k), str) for k in TEMPLATE_KEYS):
                return True
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth < _CONFIG_DEPTH:
            queue += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
    return False


def _add(loaded: Loaded, src: SourceFile, explicit: bool) -> None:
    if src.kind in ("text", "source"):
        loaded.files.append(src)
        return
    reqs = read_requests(src, explicit, loaded.errors)
    if reqs is None:
        if src.kind == "json" and _prompt_config(_loads(src.text)):
            loaded.files.append(replace(src, kind="text"))  # a prompt template kept as JSON: read as text
        return
    loaded.files.append(src)
    loaded.requests[src.path] = reqs


def load(paths: list[str], exclude: list[str] | None = None) -> Loaded:
    files, errors = discover(paths, exclude)
    loaded = Loaded(errors=errors)
    for path, explicit in files:
        try:
            src = read_source(path)
        except InputError as exc:
            loaded.errors.append(exc)
            continue
        _add(loaded, src, explicit)
    return loaded


def load_stdin(data: bytes, filename: str | None = None) -> Loaded:
    """One prompt, body or log from standard input, shown as ``filename`` (default ``-``)."""
    loaded = Loaded()
    path = filename or "-"
    kind = None
    if (
        not filename
        or Path(filename).suffix.lower()
        not in TEXT_SUFFIXES | JSON_SUFFIXES | JSONL_SUFFIXES | SOURCE_SUFFIXES
    ):
        try:
            json.loads(data.decode("utf-8-sig"))
            kind = "json"
        except (UnicodeDecodeError, ValueError, RecursionError):
            kind = "text"
    try:
        src = source_from_bytes(path, data, kind)
    except InputError as exc:
        loaded.errors.append(exc)
        return loaded
    _add(loaded, src, True)
    return loaded
