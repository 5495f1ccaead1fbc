"""``prefixgate lint``: the command. Exit 0 clean, 1 findings, 2 usage or input error.

Reads paths (files, directories, globs; ``.`` by default) or, with ``--stdin``, one
prompt or body from standard input (a progress bar on stderr for many files on a terminal);
the ``[tool.prefixgate.lint]``
section of the nearest pyproject.toml, runs the selected rules, applies a baseline, and
prints in the chosen format. Input errors are printed to stderr as
``error: file:line: message``; the other files are still checked and the exit code is 2.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from analyzer.lint import baseline as baseline_mod
from analyzer.lint import output
from analyzer.lint.config import ConfigError, load_config, resolve
from analyzer.lint.engine import run
from analyzer.lint.fix import fixed_text, unified_diff
from analyzer.lint.inputs import load, load_stdin
from analyzer.lint.model import InputError
from analyzer.lint.rules import BY_CODE, BY_NAME, RULES
from analyzer.lint.sarif import to_sarif

FORMATS = ("concise", "full", "json", "github", "sarif")


def _split(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def _explain(code: str) -> str:
    key = BY_NAME.get(code, code.upper())
    if key not in BY_CODE:
        raise click.UsageError(f"unknown rule {code!r}; see `prefixgate lint --list-rules`")
    return BY_CODE[key].RULE.docs()


#: files: below this, lint is done before a bar would draw
PROGRESS_FROM = 200


@contextlib.contextmanager
def _progress(enabled: bool, total: int):
    """A rich bar on stderr counting files, or a no-op; yields the per-file callback."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("linting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("lint", total=total)
        yield lambda: bar.advance(task)


def _report_errors(errors: list[InputError]) -> None:
    for err in errors:
        click.echo(f"error: {err}", err=True)


@click.command("lint")
@click.argument("paths", nargs=-1)
@click.option(
    "--output-format",
    type=click.Choice(FORMATS),
    help="Output format (default: concise, or the pyproject setting).",
)
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Rules to run: codes, prefixes (PG0), names or ALL; comma-separated.",
)
@click.option(
    "--extend-select",
    multiple=True,
    metavar="CODES",
    help="Rules to add to the selection (e.g. the opt-in PG203,PG204).",
)
@click.option(
    "--ignore", multiple=True, metavar="CODES", help="Rules to skip (added to the pyproject ignore list)."
)
@click.option(
    "--exit-zero", is_flag=True, help="Exit 0 even when there are findings (input errors still exit 2)."
)
@click.option(
    "--fix",
    is_flag=True,
    help="Apply safe fixes (BOM, CRLF → LF, sorted keys, sorted tools) to prompt and JSON files.",
)
@click.option(
    "--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them; exit 1 if any."
)
@click.option(
    "--baseline", "baseline_path", metavar="FILE", help="Suppress findings recorded in this baseline file."
)
@click.option(
    "--write-baseline", metavar="FILE", help="Record the current findings as the baseline and exit 0."
)
@click.option("--output-file", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option(
    "--stdin", "from_stdin", is_flag=True, help="Lint one prompt or request body read from standard input."
)
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="Name (and so kind, by its suffix) of the --stdin input in findings.",
)
@click.option("--explain", metavar="CODE", help="Show a rule's documentation and exit.")
@click.option("--list-rules", is_flag=True, help="List every rule and exit.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="A progress bar on stderr (default: when stderr is a terminal and there are many files).",
)
def lint_command(
    paths,
    output_format,
    select,
    extend_select,
    ignore,
    exit_zero,
    fix,
    diff,
    baseline_path,
    write_baseline,
    output_file,
    from_stdin,
    stdin_filename,
    explain,
    list_rules,
    progress,
) -> None:
    """Flag what breaks prompt caching in prompt files, request bodies (.json) and logs (.jsonl)."""
    if explain:
        click.echo(_explain(explain))
        return
    if list_rules:
        for r in RULES:
            flags = ("[*] " if r.fixable else "") + ("" if r.default else "(opt-in) ")
            click.echo(f"{r.code}  {r.name:<30} {r.severity:<6} {flags}{r.summary}")
        return
    try:
        cfg = load_config()
        codes = resolve(
            _split(select) or cfg.select,
            cfg.ignore + _split(ignore),
            cfg.extend_select + _split(extend_select),
        )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    fmt = output_format or cfg.output_format or "concise"
    if fmt not in FORMATS:
        raise click.UsageError(f"output-format {fmt!r} in {cfg.source} is not one of {', '.join(FORMATS)}")

    if from_stdin and (paths or fix or diff):
        raise click.UsageError("--stdin lints standard input only: no paths, --fix or --diff with it")
    loaded = (
        load_stdin(sys.stdin.buffer.read(), stdin_filename)
        if from_stdin
        else load(list(paths) or ["."], cfg.exclude)
    )
    show = (sys.stderr.isatty() and len(loaded.files) >= PROGRESS_FROM) if progress is None else progress
    with _progress(show, len(loaded.files)) as advance:
        findings = run(loaded, codes, advance=advance)

    if fix or diff:
        changed = 0
        for src in loaded.files:
            fixable = {f.code for f in findings if f.file == src.path and f.rule.fixable}
            new = fixed_text(src, fixable)
            if new is None:
                continue
            changed += 1
            before = src.data.decode("utf-8", "replace")
            if diff:
                click.echo(unified_diff(src.path, before, new), nl=False)
            else:
                try:
                    Path(src.path).write_bytes(new.encode("utf-8"))
                except OSError as exc:
                    loaded.errors.append(InputError(src.path, f"cannot write the fix: {exc.strerror or exc}"))
        if diff:
            _report_errors(loaded.errors)
            click.echo(f"{changed} file(s) would be fixed." if changed else "No fixes to apply.", err=True)
            sys.exit(2 if loaded.errors else 1 if changed else 0)
        click.echo(f"Fixed {changed} file(s).", err=True)
        errors_before = loaded.errors
        loaded = load(list(paths) or ["."], cfg.exclude)
        loaded.errors = errors_before + [
            e for e in loaded.errors if str(e) not in {str(x) for x in errors_before}
        ]
        findings = run(loaded, codes)

    if write_baseline:
        baseline_mod.write(write_baseline, findings)
        _report_errors(loaded.errors)
        click.echo(f"Wrote {len(findings)} finding(s) to the baseline {write_baseline}.", err=True)
        sys.exit(2 if loaded.errors else 0)

    suppressed = 0
    base = baseline_path or cfg.baseline
    if base:
        try:
            findings, suppressed = baseline_mod.suppress(findings, baseline_mod.read(base))
        except InputError as exc:
            loaded.errors.append(exc)

    sources = {s.path: s for s in loaded.files}
    closing = output.summary(findings, suppressed, errors=len(loaded.errors), checked=len(loaded.files))
    if fmt == "concise":
        text = "\n".join(x for x in (output.concise(findings), closing) if x)
    elif fmt == "full":
        text = "\n\n".join(x for x in (output.full(findings, sources), closing) if x)
    elif fmt == "json":
        text = output.as_json(findings)
    elif fmt == "github":
        text = output.github(findings)
    else:
        text = json.dumps(
            to_sarif(findings, [r for r in RULES if r.code in codes], loaded.errors),
            indent=2,
            ensure_ascii=False,
        )
    if output_file:
        Path(output_file).write_text(text + "\n", encoding="utf-8")
    elif text:
        click.echo(text)
    _report_errors(loaded.errors)
    if loaded.errors:
        sys.exit(2)
    sys.exit(1 if findings and not exit_zero else 0)
