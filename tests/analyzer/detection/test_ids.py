"""analyzer.detection.ids: a workflow export's own ids and moments (a node's epoch-ms id and every copy
of it, ``"id": "<uuid>"``, ``"createdAt": …``, a package digest after a version) are fixed where the
document is; the same shapes under a request's or a session's label, or alone, are still found."""

from __future__ import annotations

import pytest

from analyzer.detect import find_volatile

_DIFY = """workflow:
  graph:
    edges:
    - id: 1740638793787-source-1740645185279-target
      source: '1740638793787'
      target: '1740645185279'
    nodes:
    - data:
        answer: '{{#1740645185279.text#}}'
        variable_selector:
        - '1740645185279'
        - text
      id: '1740645185279'
    - data:
        cases:
        - case_id: 8c4620fa-15d7-464f-9cb9-561f1a1e2b3c
      sourceHandle: 8c4620fa-15d7-464f-9cb9-561f1a1e2b3c
  plugin: langgenius/openai:0.0.12@604c1a752a92633a354dc7eea7172403a1b2c3d4e5f6
"""
_N8N = """{
  "nodes": [{"id": "03b4699f-ba43-4f5f-ad69-6f81deea2641", "name": "Agent"}],
  "versionId": "77f6b6f7-d699-4a7e-b3e7-fe8a60bde7ba",
  "meta": {"instanceId": "5b860a91d7844b5237bb51cc58691ca8c3dc5b576f42d4d6bbedfb8d43d58ece"},
  "createdAt": "2024-12-23T16:09:38.737Z",
  "updatedAt": "2024-12-23T16:09:38.737Z"
}
"""


@pytest.mark.parametrize("text", [_DIFY, _N8N])
def test_a_workflow_exports_own_ids_and_moments_are_fixed(text):
    assert find_volatile(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Request received at 1740638793787 ms.\n", "1740638793787"),  # an epoch with no id around it
        ("Session id: 03b4699f-ba43-4f5f-ad69-6f81deea2641\n", "03b4699f-ba43-4f5f-ad69-6f81deea2641"),
        ("Current time: 2024-12-23T16:09:38Z\n", "2024-12-23T16:09:38Z"),
    ],
)
def test_the_same_shapes_as_a_requests_values_are_still_found(text, value):
    assert value in [v.value for v in find_volatile(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Paid: 1740638793787\n", "1740638793787"),  # a word ending in "id" is no id key
        ("Updated:\nCurrent time: 2025-04-24 13:52:03\n", "2025-04-24 13:52:03"),  # a key on the line above
        ("id:\nSession: 3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a01\n", "3f2b9c1e-8d4a-4e6f-9b2a-1c3d5e7f9a01"),
        ("Now in ms: 1740638793787\n\nRange: 1740638793787-1740638800000\n", "1740638793787"),  # a range
        ("Timestamp: 1740638793787, was 21740638793787-x\n", "1740638793787"),  # inside a longer run
    ],
)
def test_what_only_looks_like_an_id_key_or_copy_keeps_the_value(text, value):
    assert value in [v.value for v in find_volatile(text)]


def test_uuids_listed_under_a_key_naming_ids_are_a_records_own():
    yaml = "      data:\n        dataset_ids:\n          - 64862693-8529-4627-a20e-35b7dcb883c8\n          - 84782981-6a4d-4d19-9189-dd72fe435a57\n"
    assert [v for v in find_volatile(yaml) if v.kind == "uuid"] == []
    live = "Request:\n  - 64862693-8529-4627-a20e-35b7dcb883c8\n"
    assert [v.kind for v in find_volatile(live)] == ["uuid"]


def test_ids_listed_under_a_per_request_key_or_quoted_under_a_camel_key():
    per_request = "request_ids:\n  - 64862693-8529-4627-a20e-35b7dcb883c8\n"
    assert [v.kind for v in find_volatile(per_request)] == ["uuid"]
    quoted = "datasetIds:\n  - '64862693-8529-4627-a20e-35b7dcb883c8'\n"
    assert [v for v in find_volatile(quoted) if v.kind == "uuid"] == []
