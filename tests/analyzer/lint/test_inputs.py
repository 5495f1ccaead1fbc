"""analyzer.lint.inputs: a prompt template kept as JSON (a LangChain hub file, a prompt config, one nested in
an app config or an n8n workflow) is read as text; a JSON file that is neither a request nor a template is
an input error when named."""

from __future__ import annotations

import json

from analyzer.lint.engine import run
from analyzer.lint.inputs import load

CODES = {f"PG00{i}" for i in range(1, 10)}


def test_a_prompt_template_kept_as_json_is_read_as_text(tmp_path):
    hub = {
        "input_variables": ["today", "input"],
        "template": "You are a helpful assistant.\nCurrent date: {today}\nHuman: {input}\nAI:",
        "template_format": "f-string",
    }
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(hub, indent=4), encoding="utf-8")
    loaded = load([str(path)])
    assert loaded.errors == [] and [f.kind for f in loaded.files] == ["text"]
    findings = run(loaded, CODES)
    assert [f.code for f in findings if "{today}" in f.message] == ["PG004"]


def test_a_named_json_file_with_no_request_nor_template_is_an_input_error(tmp_path):
    path = tmp_path / "package.json"
    path.write_text('{"name": "app", "version": "1.0.0", "description": "a chat app"}', encoding="utf-8")
    loaded = load([str(path)])
    assert [e.message for e in loaded.errors] == ["no request body here (expected messages, input or prompt)"]


def test_a_logged_body_whose_messages_were_left_out_is_read_for_its_system_prompt(tmp_path):
    body = {
        "model": "claude-sonnet-4",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Today's date: 2025-06-01"}],
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    loaded = load([str(path)])
    assert loaded.errors == [] and [f.kind for f in loaded.files] == ["json"]
    assert [f.code for f in run(loaded, CODES) if "2025-06-01" in f.message] == ["PG002"]
    # a settings file with a "system" key but no model is still no request body
    settings = tmp_path / "settings.json"
    settings.write_text('{"system": "linux", "theme": "dark"}', encoding="utf-8")
    assert [e.message for e in load([str(settings)]).errors] == [
        "no request body here (expected messages, input or prompt)"
    ]


def test_a_bare_conversation_array_and_a_proxy_record_nesting_data_are_bodies(tmp_path):
    chat = [{"role": "system", "content": "It is 2025-11-06 21:49"}, {"role": "user", "content": "hi"}]
    responses = chat + [{"type": "function_call", "name": "get_weather", "call_id": "c1", "arguments": "{}"}]
    record = {"endpoint": "/v1/chat/completions", "data": {"meta": {"v": 1}, "body": {"messages": chat}}}
    for name, value in (("chat.json", chat), ("responses.json", responses), ("record.json", record)):
        path = tmp_path / name
        path.write_text(json.dumps(value, indent=2), encoding="utf-8")
        loaded = load([str(path)])
        assert loaded.errors == [], name
        (f,) = [f for f in run(loaded, CODES) if f.code == "PG001"]
        line = path.read_text(encoding="utf-8").splitlines()[f.line - 1]
        assert line[f.col - 1 : f.end_col - 1] == "2025-11-06 21:49", name  # where it is in the file
    # an array of other things is still no request body
    other = tmp_path / "list.json"
    other.write_text('[{"name": "a"}, {"role": "admin"}]', encoding="utf-8")
    assert [e.message for e in load([str(other)]).errors] == [
        "no request body here (expected messages, input or prompt)"
    ]


def test_a_config_or_a_workflow_nesting_a_prompt_is_read_as_text(tmp_path):
    config = {"services": {"gemini": {"model": "gemini-1.5-flash", "system_prompt": "You classify tasks."}}}
    workflow = {
        "nodes": [
            {"id": "03b4699f-ba43-4f5f-ad69-6f81deea2641", "type": "@n8n/n8n-nodes-langchain.agent"},
            {"parameters": {"options": {"systemMessage": "=You help. Today is {{ $now.toISO() }}."}}},
            {"parameters": {"sessionKey": "={{ $json.message.chat.id }}", "at": "{{ $now.toISO() }}"}},
        ]
    }
    for name, value in (("config.json", config), ("workflow.json", workflow)):
        (tmp_path / name).write_text(json.dumps(value, indent=2), encoding="utf-8")
    loaded = load([str(tmp_path / "config.json"), str(tmp_path / "workflow.json")])
    assert loaded.errors == [] and [f.kind for f in loaded.files] == ["text", "text"]
    assert [f.code for f in run(loaded, CODES) if "$now" in f.message] == [
        "PG004"
    ]  # the node's id is no finding
    deep = {"a": [{"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"system_prompt": "x"}}}}}}}}}]}
    (tmp_path / "deep.json").write_text(json.dumps(deep), encoding="utf-8")
    assert load([str(tmp_path / "deep.json")]).errors  # deeper than a config nests a prompt: no template


def test_a_body_logged_without_its_latest_turn_keeps_its_system_messages_in_the_head(tmp_path):
    system_only = {
        "messages": [
            {"role": "system", "content": "You are X."},
            {"role": "system", "content": "Today's date: 2025-12-02"},
        ]
    }
    with_user = {
        "messages": [*system_only["messages"], {"role": "user", "content": "Today's date: 2025-12-03"}]
    }
    for name, body, dates in (("a.json", system_only, ["2025-12-02"]), ("b.json", with_user, ["2025-12-02"])):
        path = tmp_path / name
        path.write_text(json.dumps(body), encoding="utf-8")
        got = [f.message.split("`")[1] for f in run(load([str(path)]), CODES) if f.code == "PG002"]
        assert got == dates, name  # the user's own latest turn is never the cached head


def test_a_trailing_system_message_after_the_turns_is_the_latest_turn_and_a_record_is_read_inside(tmp_path):
    chat = {"messages": [{"role": "system", "content": "You are X."}, {"role": "user", "content": "hi"}]}
    chat["messages"] += [
        {"role": "assistant", "content": "ok"},
        {"role": "system", "content": "Current time: 2025-04-24 13:52"},
    ]
    record = {
        "model": "gpt-4o",
        "system": "openai",
        "request": {
            "messages": [
                {"role": "system", "content": "Today is 2025-04-24."},
                {"role": "user", "content": "x"},
            ]
        },
    }
    for name, body, codes in (("trail.json", chat, []), ("record.json", record, ["PG002", "PG003"])):
        path = tmp_path / name
        path.write_text(json.dumps(body), encoding="utf-8")
        assert sorted(f.code for f in run(load([str(path)]), CODES)) == codes, name
