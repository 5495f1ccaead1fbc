"""Each lint rule against its fixtures: the bad file gives the rule's finding at the exact
place (line, column and JSON field), the good file gives none."""

from __future__ import annotations

import json

import pytest

from analyzer.lint.engine import run
from analyzer.lint.inputs import load
from analyzer.lint.rules import BY_CODE, RULES
from tests.support import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "lint"
CODES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_every_rule_has_fixtures_and_docs():
    assert CODES == sorted(r.code for r in RULES)
    for rule in RULES:
        assert rule.why and rule.example and rule.fix and rule.message
        assert "What it does" in rule.docs() and rule.code in rule.docs()


@pytest.mark.parametrize("code", CODES)
def test_bad_fixture_is_found_at_the_right_place(code):
    expect = json.loads((FIXTURES / code / "expect.json").read_text())
    path = FIXTURES / code / expect["file"]
    findings = [f for f in run(load([str(path)]), {code}) if f.code == code]
    assert findings, f"{code} found nothing in {path.name}"
    first = findings[0]
    text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
    assert expect["at"] in text
    assert (first.line, first.col) == line_col(text, text.index(expect["at"]))
    assert first.field == expect["field"]
    assert first.rule is BY_CODE[code].RULE and first.message


@pytest.mark.parametrize("code", CODES)
def test_good_fixture_is_clean(code):
    goods = sorted((FIXTURES / code).glob("good.*"))
    assert goods
    loaded = load([str(p) for p in goods])
    assert not loaded.errors
    assert [f for f in run(loaded, {code})] == []


def test_negatives_fixture_is_clean_under_every_rule():
    negatives = ALL_FIXTURES / "detect" / "negatives.md"
    content_rules = {r.code for r in RULES} - {"PG104"}  # PG104 judges the file's length, not its content
    assert run(load([str(negatives)]), content_rules) == []


def test_volatile_content_in_the_last_message_is_not_a_prefix_finding(tmp_path):
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "It is 14:05 on 2026-11-30, request_id: abc123def4"},
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    assert run(load([str(path)]), {r.code for r in RULES if r.default}) == []


@pytest.mark.parametrize(
    ("model", "mark", "options", "found"),
    [
        ("gpt-4o", False, None, True),
        ("gpt-5.6-terra", False, None, True),
        # GPT-5.6 implicit mode: a marked head does not end the cached prefix, the implicit
        # breakpoint at the newest message caches the history after it too
        ("gpt-5.6-terra", True, None, True),
        ("gpt-5.6-terra", True, {"mode": "implicit"}, True),
        # explicit mode: only the markers are written, the history after the last one is not cached
        ("gpt-5.6-terra", True, {"mode": "explicit"}, False),
    ],
)
def test_volatile_content_in_the_history_is_in_the_prefix_of_a_marked_gpt56_request(
    tmp_path, model, mark, options, found
):
    head = {
        "type": "text",
        "text": "You are a coding agent. " * 300,
        **({"prompt_cache_breakpoint": {"mode": "explicit"}} if mark else {}),
    }
    body = {
        "model": model,
        **({"prompt_cache_options": options} if options else {}),
        "messages": [
            {"role": "developer", "content": [head]},
            {"role": "user", "content": "Session started 2026-11-30T14:05:00Z. Fix the bug."},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Thanks, next one."},
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    pg001 = [f for f in run(load([str(path)]), {"PG001"})]
    assert bool(pg001) is found
    if found:
        assert pg001[0].field == "messages[1].content"


def test_pg103_names_the_marker_of_an_openai_part_where_it_sits(tmp_path):
    now = "Current time: 2026-11-30T14:05:00Z. "
    mark = {"prompt_cache_breakpoint": {"mode": "explicit"}}
    body = {
        "model": "gpt-5.6-terra",
        "input": [
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [{"type": "input_text", "text": now + "ok", **mark}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "rules"},
                    {"type": "input_text", "text": now + "go on", **mark},
                ],
            },
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body, indent=2))
    text = path.read_text()
    fields = [(f.field, f.line) for f in run(load([str(path)]), {"PG103"})]
    assert [f for f, _ in fields] == [
        "input[0].output[0].prompt_cache_breakpoint",
        "input[1].content[1].prompt_cache_breakpoint",
    ]
    first_marker_line = text[: text.index('"prompt_cache_breakpoint"')].count("\n") + 1
    assert fields[0][1] == first_marker_line


def test_pg102_counts_the_top_level_cache_control_as_the_emulator_and_the_api_do(tmp_path):
    cc = {"type": "ephemeral"}
    system = [{"type": "text", "text": f"part {i}", "cache_control": cc} for i in range(4)]
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 8,
        "cache_control": cc,
        "system": system,
        "messages": [{"role": "user", "content": "hi"}],
    }
    path = tmp_path / "auto.json"
    path.write_text(json.dumps(body, indent=2))
    (f,) = run(load([str(path)]), {"PG102"})
    assert f.field == "cache_control" and f.message.startswith("5 cache_control breakpoints")
    # on the last block already marked, the automatic one adds none
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]}]
    body["system"] = system[:3]
    path.write_text(json.dumps(body, indent=2))
    assert run(load([str(path)]), {"PG102"}) == []


def test_structural_ids_in_history_are_not_findings(tmp_path):
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9xQ2bLkP0aZ7mN3v",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_9xQ2bLkP0aZ7mN3v", "content": "ok"},
            {"role": "user", "content": "thanks"},
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    assert run(load([str(path)]), {"PG006", "PG008"}) == []


def test_log_repeats_collapse_into_one_finding_with_a_count(tmp_path):
    lines = [
        json.dumps(
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "system", "content": f"Now 10:00:{i:02d}. Rules."},
                    {"role": "user", "content": "hi"},
                ],
            }
        )
        for i in range(5)
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    findings = run(load([str(path)]), {"PG001", "PG303"})
    pg001 = [f for f in findings if f.code == "PG001"]
    assert len(pg001) == 1 and "+4 more requests" in pg001[0].message and pg001[0].line == 1
    pg303 = [f for f in findings if f.code == "PG303"]
    assert len(pg303) == 1 and "forks 4 of 4" in pg303[0].message


@pytest.mark.parametrize(("system_bytes", "found"), [(3500, True), (2000, False), (6000, False)])
def test_openai_near_miss_of_the_1024_token_minimum(tmp_path, system_bytes, found):
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "x" * system_bytes}, {"role": "user", "content": "hi"}],
    }
    path = tmp_path / "b.json"
    path.write_text(json.dumps(body))
    findings = run(load([str(path)]), {"PG104"})
    assert bool(findings) is found
    if found:
        assert (
            "short of OpenAI's 1,024-token minimum" in findings[0].message
            and findings[0].field == "messages[0]"
        )


def test_unsorted_keys_under_an_odd_key_name_point_at_that_object(tmp_path):
    schema = {
        "name": "answer",
        "schema": {"$defs": {"item": {"type": "string", "description": "d"}}, "type": "object"},
    }
    body = {
        "model": "gpt-4o",
        "response_format": {"json_schema": schema, "type": "json_schema"},
        "messages": [{"role": "user", "content": "hi"}],
    }
    path = tmp_path / "b.json"
    path.write_text(json.dumps(body, indent=2))
    (finding,) = run(load([str(path)]), {"PG203"})
    text = path.read_text()
    assert finding.field == 'response_format.json_schema.schema."$defs".item'
    assert (finding.line, finding.col) == line_col(text, text.index('"item": {') + len('"item": '))


def test_a_repeated_tool_is_another_tool_list_not_another_order(tmp_path):
    def tool(name: str) -> dict:
        return {"type": "function", "function": {"name": name, "parameters": {}}}

    bodies = [[tool("a"), tool("b")], [tool("a"), tool("b"), tool("b")], [tool("b"), tool("a")]]
    path = tmp_path / "log.jsonl"
    path.write_text(
        "".join(
            json.dumps({"model": "gpt-4o", "tools": t, "messages": [{"role": "user", "content": "x"}]}) + "\n"
            for t in bodies
        )
    )
    loaded = load([str(path)])
    findings = run(loaded, {"PG301"})
    assert loaded.errors == []  # no rule crashed on the duplicate
    assert [(f.line, f.field) for f in findings] == [(3, "tools")] and "(b, a vs a, b)" in findings[0].message
