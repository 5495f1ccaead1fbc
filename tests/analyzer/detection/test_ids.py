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
