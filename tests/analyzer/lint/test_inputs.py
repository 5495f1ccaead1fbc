"""analyzer.lint.inputs: a prompt template kept as JSON (a LangChain hub file, a prompt config) is read
as text; a JSON file that is neither a request nor a template is an input error when named."""

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
