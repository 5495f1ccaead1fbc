"""analyzer.lint.cassettes: a VCR cassette is linted at its requests' bodies only; its responses and
headers (ids, Date, created) are the exchange's record; other YAML is read as before."""

from __future__ import annotations

from analyzer.lint.cassettes import request_bodies
from analyzer.lint.engine import run
from analyzer.lint.inputs import load

CODES = {f"PG00{i}" for i in range(1, 10)}

CASSETTE = """interactions:
- request:
    body: '{"messages": [{"role": "system", "content": "You are a helpful assistant.\\nThe
      current time and date is Tue Jan  1 00:00:00 2000"}], "model": "gpt-3.5-turbo"}'
    headers:
      Content-Length:
      - '3254'
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"id": "chatcmpl-7b1e6c9d5f8a4b3c2d1e0f9a", "created": 1689025475}'
    headers:
      Date:
      - Mon, 10 Jul 2023 21:44:35 GMT
      x-request-id:
      - 7b1e6c9d5f8a4b3c2d1e0f9a8b7c6d5e
    status:
      code: 200
- request:
    body:
      string: '{"messages": [{"role": "system", "content": "Session: 3f2b9c1e-8a7d-4e6f-9b0c-1d2e3f4a5b6c"}]}'
    method: POST
  response:
    headers:
      Date:
      - Mon, 10 Jul 2023 21:44:39 GMT
version: 1
"""


def test_only_the_request_bodies_are_read(tmp_path):
    spans = request_bodies(CASSETTE)
    assert spans is not None and len(spans) == 2
    assert all("Date" not in CASSETTE[a:b] and "x-request-id" not in CASSETTE[a:b] for a, b in spans)
    path = tmp_path / "chat.yaml"
    path.write_text(CASSETTE, encoding="utf-8")
    findings = run(load([str(path)]), CODES)
    lines = sorted({f.line for f in findings})
    assert lines == [4, 22], [
        (f.line, f.code) for f in findings
    ]  # the clock in body 1, the session id in body 2


def test_yaml_that_is_no_cassette_is_read_as_text(tmp_path):
    assert request_bodies("system: |\n  Today is 2025-11-03.\n") is None
    path = tmp_path / "prompt.yaml"
    path.write_text("system: |\n  Current date: 2025-11-03\n", encoding="utf-8")
    assert [f.line for f in run(load([str(path)]), CODES) if f.code == "PG002"] == [2]


RUBY_CASSETTE = """---
http_interactions:
- request:
    method: post
    uri: https://api.openai.com/v1/chat/completions
    body:
      encoding: UTF-8
      string: '{"model":"gpt-4o","messages":[{"role":"system","content":"Today is 2024-03-05."}]}'
    headers:
      Date:
      - Tue, 05 Mar 2024 10:00:00 GMT
  response:
    status:
      code: 200
    body:
      encoding: UTF-8
      string: '{"id":"chatcmpl-8xYz","created":1709632800}'
  recorded_at: Tue, 05 Mar 2024 10:00:00 GMT
recorded_with: VCR 6.2.0
"""


def test_a_ruby_vcr_cassette_is_read_at_its_request_body_string():
    spans = request_bodies(RUBY_CASSETTE)
    assert spans is not None and len(spans) == 1
    ((a, b),) = spans
    assert RUBY_CASSETTE[a:b].startswith('\'{"model"') and "encoding" not in RUBY_CASSETTE[a:b]
    assert RUBY_CASSETTE[a:b].endswith("}'")


def test_an_encoded_body_is_bytes_not_a_prompt(tmp_path):
    cassette = RUBY_CASSETTE.replace(
        '      encoding: UTF-8\n      string: \'{"model"',
        '      encoding: ASCII-8BIT\n      base64_string: |\n        eyJtb2RlbCI6ImdwdC00byJ9Cg==\n      x: \'{"model"',
        1,
    )
    assert request_bodies(cassette) == []
    vcrpy = "interactions:\n- request:\n    body: !!binary |\n      H4sIAAAAAAAAA6tWyk0tSUxXslIqzy/KTlGqBQBuXgQ4EwAAAA==\n  response:\n    status: {code: 200}\n"
    assert request_bodies(vcrpy) == []
    path = tmp_path / "binary.yaml"
    path.write_text(vcrpy, encoding="utf-8")
    assert run(load([str(path)]), CODES) == []
