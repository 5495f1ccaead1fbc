"""`prefixgate lint` end to end: exit codes, formats (SARIF validated against the official
schema), configuration, baseline, --fix/--diff and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from analyzer.lint.cli import lint_command
from tests.support import FIXTURES as ALL_FIXTURES

SCHEMA = json.loads((ALL_FIXTURES / "sarif-schema-2.1.0.json").read_text())
FIXTURES = ALL_FIXTURES / "lint"


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(*args: str):
    return CliRunner().invoke(lint_command, list(args))


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_exit_codes_clean_findings_and_exit_zero(work):
    write(work / "clean.md", "You are the support assistant.\n")
    write(work / "bad.md", "Current time: 14:05 UTC\n")
    assert lint("clean.md").exit_code == 0
    result = lint("bad.md")
    assert result.exit_code == 1
    assert "bad.md:1:15: PG001" in result.stdout
    assert lint("bad.md", "--exit-zero").exit_code == 0


def test_bad_input_is_named_the_rest_is_checked_and_exit_is_2(work):
    write(work / "bad.md", "Current time: 14:05 UTC\n")
    write(work / "broken.json", '{"messages": [}')
    write(
        work / "log.jsonl",
        json.dumps(
            {
                "model": "m",
                "messages": [{"role": "system", "content": "at 10:00:01"}, {"role": "user", "content": "x"}],
            }
        )
        + "\n{nope\n",
    )
    (work / "latin1.txt").write_bytes(b"caf\xe9\n")
    result = lint("bad.md", "broken.json", "log.jsonl", "latin1.txt", "missing.md")
    assert result.exit_code == 2
    assert "PG001" in result.stdout and "log.jsonl:1:" in result.stdout  # the rest was still checked
    for needle in (
        "broken.json:1:15: invalid JSON",
        "log.jsonl:2:2: line is not JSON",
        "latin1.txt:1: not UTF-8",
        "missing.md: no such file",
    ):
        assert needle in result.stderr
    assert "Traceback" not in result.output


def test_unknown_codes_and_config_keys_exit_2(work):
    write(work / "a.md", "hello\n")
    result = lint("--select", "PG999", "a.md")
    assert result.exit_code == 2 and "unknown rule selector" in result.output
    write(work / "pyproject.toml", '[tool.prefixgate.lint]\nselect = ["PG001"]\nfrobnicate = 1\n')
    result = lint("a.md")
    assert result.exit_code == 2 and "frobnicate" in result.output
    write(work / "pyproject.toml", "[tool]\nprefixgate = 1\n")
    result = lint("a.md")
    assert result.exit_code == 2 and "must be a table" in result.output and "Traceback" not in result.output


def test_pyproject_select_ignore_and_cli_override(work):
    write(work / "p.md", "Date: 2026-11-30 at 14:05\n")
    write(
        work / "pyproject.toml",
        '[tool.prefixgate.lint]\nignore = ["date-in-prefix"]\noutput-format = "json"\n',
    )
    codes = {f["code"] for f in json.loads(lint("p.md").stdout)}
    assert codes == {"PG001"}
    codes = {f["code"] for f in json.loads(lint("p.md", "--select", "PG0", "--ignore", "PG001").stdout)}
    assert codes == set()  # PG002 stays ignored by the file, PG001 by the flag


def test_concise_full_json_github_formats(work):
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Now 12:30. Be brief."},
            {"role": "user", "content": "hi"},
        ],
    }
    write(work / "b.json", json.dumps(body, indent=2))
    concise = lint("b.json").stdout
    assert concise.startswith("b.json:6:23: PG001 [messages[0].content]")
    full = lint("b.json", "--output-format", "full").stdout
    assert "^^^^^" in full and "help:" in full
    data = json.loads(lint("b.json", "--output-format", "json").stdout)
    assert data[0]["field"] == "messages[0].content" and data[0]["line"] == 6 and data[0]["column"] == 23
    gh = lint("b.json", "--output-format", "github").stdout
    assert gh.startswith("::error title=prefixgate PG001 (time-in-prefix),file=b.json,line=6,col=23")


def test_sarif_validates_against_the_official_schema(work):
    for src in ("PG103/bad.json", "PG301/bad.jsonl", "PG001/bad.md"):
        (work / src.replace("/", "_")).write_bytes((FIXTURES / src).read_bytes())
    write(work / "broken.jsonl", "{oops\n")
    result = lint("--output-format", "sarif", ".")
    assert result.exit_code == 2
    sarif = json.loads(result.stdout)
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert (
        SCHEMA["$id"].endswith("/sarif-schema-2.1.0.json") and len(SCHEMA["definitions"]) == 52
    )  # the OASIS file, vendored
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    validator.validate(sarif)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert all(
        r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"] for r in rules
    )
    results = run["results"]
    assert {r["ruleId"] for r in results} >= {"PG001", "PG103", "PG301"}
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["partialFingerprints"]["prefixgate/v1"]
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert run["invocations"][0]["executionSuccessful"] is False
    assert (
        run["columnKind"] == "unicodeCodePoints"
    )  # our columns count characters, as lint's text output does
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)


def test_baseline_suppresses_known_findings_only(work):
    p = write(work / "p.md", "Current time: 14:05 UTC\nYou are helpful.\n")
    result = lint("p.md", "--write-baseline", "base.json")
    assert result.exit_code == 0 and (work / "base.json").exists()
    assert lint("p.md", "--baseline", "base.json").exit_code == 0
    write(
        p, "Intro line.\nCurrent time: 14:05 UTC\nYou are helpful. request_id: abc123def4\n"
    )  # moved + one new
    result = lint("p.md", "--baseline", "base.json")
    assert result.exit_code == 1
    assert (
        "PG006" in result.stdout
        and "PG001" not in result.stdout
        and "suppressed by the baseline" in result.stdout
    )
    write(work / "bad-base.json", "[1, 2]")
    assert lint("p.md", "--baseline", "bad-base.json").exit_code == 2


def test_fix_crlf_and_bom_in_prompt_files(work):
    p = work / "p.md"
    p.write_bytes("\ufeffYou are helpful.\r\nBe brief.\nBe kind.\r\n".encode())
    result = lint("p.md", "--fix")
    assert result.exit_code == 0, result.output
    assert p.read_bytes() == b"You are helpful.\nBe brief.\nBe kind.\n"


def test_diff_shows_without_writing_and_fix_sorts_json(work):
    body = {
        "model": "gpt-4o",
        "tools": [
            {"type": "function", "function": {"name": "search", "parameters": {}}},
            {"type": "function", "function": {"name": "browse", "parameters": {}}},
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }
    p = write(work / "b.json", json.dumps(body, indent=2) + "\n")
    before = p.read_bytes()
    result = lint("b.json", "--select", "ALL", "--diff")
    assert (
        result.exit_code == 1 and "--- a/b.json" in result.stdout and '+      "function": {' in result.stdout
    )
    assert p.read_bytes() == before
    result = lint("b.json", "--select", "ALL", "--fix")
    assert result.exit_code == 0, result.output
    fixed = json.loads(p.read_text())
    assert [t["function"]["name"] for t in fixed["tools"]] == ["browse", "search"]
    assert list(fixed["tools"][0]) == ["function", "type"]
    assert fixed["messages"] == body["messages"]
    assert lint("b.json", "--select", "ALL", "--diff").exit_code == 0


def test_logs_are_never_rewritten(work):
    line = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a\r\nb\nc"}]})
    p = write(work / "log.jsonl", line + "\n" + line + "\n")
    before = p.read_bytes()
    lint("log.jsonl", "--fix")
    assert p.read_bytes() == before


def test_directories_and_globs(work):
    (work / "prompts" / "sub").mkdir(parents=True)
    write(work / "prompts" / "a.md", "Now 12:30\n")
    write(work / "prompts" / "sub" / "b.txt", "Today is Monday\n")
    write(work / "prompts" / "package.json", '{"name": "x"}')  # not a request: skipped in a scan
    assert {f["file"] for f in json.loads(lint("prompts", "--output-format", "json").stdout)} == {
        "prompts/a.md",
        "prompts/sub/b.txt",
    }
    assert {f["file"] for f in json.loads(lint("prompts/**/*.txt", "--output-format", "json").stdout)} == {
        "prompts/sub/b.txt"
    }
    assert lint("nothing/*.md").exit_code == 2


def test_explain_and_list_rules():
    assert "Why is this bad?" in lint("--explain", "PG101").stdout
    assert "time-in-prefix" in lint("--list-rules").stdout
    assert lint("--explain", "PG999").exit_code == 2


def test_wrapped_log_records_and_odd_bodies_never_crash(work):
    rec = {
        "ts": 1,
        "request": {
            "model": "gpt-4o",
            "messages": [{"role": "system", "content": "Now 12:30"}, {"role": "user", "content": "x"}],
        },
        "response": "not an object",
    }
    odd = [
        {"messages": "hello"},
        {"messages": [1, None, {"role": 5, "content": 7}]},
        {
            "model": 5,
            "system": 12,
            "messages": [{"role": "user", "content": [{"type": "text", "text": 3}, 4]}],
            "tools": {"a": 1},
        },
        {
            "input": ["x", {"role": "user", "content": [{"type": "input_text", "text": "at 12:30"}]}],
            "tools": [None, 1],
        },
    ]
    write(work / "log.jsonl", "".join(json.dumps(r) + "\n" for r in [rec, *odd]))
    write(work / "deep.json", "[" * 5000 + "]" * 5000)
    result = lint("--select", "ALL", "--output-format", "json", ".")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "deep.json:1: JSON nested too deeply" in result.stderr
    first = json.loads(result.stdout)[0]
    assert (first["file"], first["line"], first["field"]) == ("log.jsonl", 1, "messages[0].content")
    raw = (work / "log.jsonl").read_text().splitlines()[0]
    assert raw[first["column"] - 1 :].startswith("12:30")


def test_closing_line_never_claims_success_on_input_errors_or_no_files(work):
    (work / "empty").mkdir()
    result = lint("empty")
    assert (
        result.exit_code == 0
        and "nothing was checked" in result.stdout
        and "All checks passed" not in result.stdout
    )
    (work / "bin.txt").write_bytes(b"\xff\xfe\x00binary")
    write(work / "ok.md", "hello\n")
    result = lint("ok.md", "bin.txt")
    assert (
        result.exit_code == 2
        and "1 input error" in result.stdout
        and "All checks passed" not in result.stdout
    )
    write(work / "empty.jsonl", "")
    write(
        work / "blank.jsonl",
        "\n" + json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}) + "\n\n   \n",
    )
    assert lint("empty.jsonl", "blank.jsonl").stdout.strip() == "All checks passed!"


def test_sarif_uris_stay_inside_the_root_or_are_absolute(work, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "far away.md"
    write(outside, "Now 12:30\n")
    (work / "sub dir").mkdir()
    write(work / "sub dir" / "near.md", "Now 12:30\n")
    sarif = json.loads(
        lint("--output-format", "sarif", str(outside), str(work / "sub dir" / "near.md")).stdout
    )
    locations = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0][
            "physicalLocation"
        ]["artifactLocation"]
        for r in sarif["runs"][0]["results"]
    }
    assert locations["sub%20dir/near.md"]["uriBaseId"] == "%SRCROOT%"
    far = outside.resolve().as_uri()
    assert (
        far in locations
        and "uriBaseId" not in locations[far]
        and not any(u.startswith("..") for u in locations)
    )
    jsonschema.Draft7Validator(SCHEMA).validate(sarif)


def test_stdin_reads_one_prompt_or_body(work):
    result = CliRunner().invoke(
        lint_command, ["--stdin"], input="You are helpful.\nCurrent time: 14:05:09 UTC\n"
    )
    assert (
        result.exit_code == 1
        and "\n-:2:15: PG001" in result.stdout
        and "there — follows `Current time`" in result.stdout
    )
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Now 12:30. Be brief."},
            {"role": "user", "content": "hi"},
        ],
    }
    result = CliRunner().invoke(
        lint_command,
        ["--stdin", "--stdin-filename", "req.json", "--output-format", "json"],
        input=json.dumps(body),
    )
    (finding,) = json.loads(result.stdout)
    assert result.exit_code == 1 and (finding["file"], finding["field"]) == (
        "req.json",
        "messages[0].content",
    )
    result = CliRunner().invoke(
        lint_command,
        ["--stdin", "--stdin-filename", "agent.py"],
        input='PROMPT = f"You are the agent for the team. Now: {datetime.now()}."\n',
    )
    assert result.exit_code == 1 and "agent.py:1:" in result.stdout and "PG004" in result.stdout
    assert (
        CliRunner().invoke(lint_command, ["--stdin"], input="You are the support assistant.\n").exit_code == 0
    )
    result = CliRunner().invoke(lint_command, ["--stdin", "a.md"], input="x")
    assert result.exit_code == 2 and "--stdin" in result.output


def test_schema_examples_are_never_findings_and_descriptions_need_a_now_label(work):
    tool = {
        "type": "function",
        "function": {
            "name": "book",
            "description": "Book a slot in HH:MM, for the 09:15 opening.",
            "parameters": {
                "type": "object",
                "properties": {
                    "start": {
                        "type": "string",
                        "examples": ["09:15", "2026-12-03T10:00:00Z"],
                        "default": "10:30:00",
                    },
                    "when": {"type": "string", "description": "Today is 2026-11-30; book after it."},
                },
            },
        },
    }
    body = {"model": "gpt-4o", "tools": [tool], "messages": [{"role": "user", "content": "hi"}]}
    write(work / "b.json", json.dumps(body, indent=2))
    findings = json.loads(lint("b.json", "--output-format", "json", "--select", "PG0").stdout)
    assert [(f["code"], f["field"]) for f in findings] == [
        ("PG003", "tools[0].function.parameters.properties.when.description"),
        ("PG002", "tools[0].function.parameters.properties.when.description"),
    ]


def test_a_source_tree_is_linted_where_its_prompts_live(work):
    (work / "src").mkdir()
    write(
        work / "src" / "prompt.ts",
        "export const system = `You are the travel assistant for our users.\n"
        "The current date is ${new Date().toLocaleDateString()}.`;\n",
    )
    write(
        work / "src" / "util.py",
        'import logging\nlogging.info(f"started at {datetime.now()} for the user and the team")\n',
    )
    result = lint("src")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("src/prompt.ts:2:1: PG003 today/current-date phrase `The current date is`")
    assert lines[1].startswith(
        "src/prompt.ts:2:21: PG004 template placeholder `${new Date().toLocaleDateString()}`"
    )
    assert lines[1].endswith("(a clock, date or id) — calls `new Date()`")
    assert "util.py" not in result.stdout


def test_progress_is_opt_in_off_a_terminal_and_changes_nothing(tmp_path):
    for i in range(3):
        (tmp_path / f"p{i}.txt").write_text(f"Current time: 2026-12-01 08:1{i}:03 UTC\nYou are Atlas.\n")
    quiet = CliRunner().invoke(lint_command, [str(tmp_path), "--no-progress"])
    shown = CliRunner().invoke(lint_command, [str(tmp_path), "--progress"])
    assert quiet.exit_code == shown.exit_code == 1
    assert quiet.stdout == shown.stdout and quiet.stderr == ""
