"""Anthropic cache diagnostics in the emulator: each ``cache_miss_reason``, via the anthropic SDK on a real uvicorn."""

from __future__ import annotations

import anthropic
import pytest

from analyzer.segments import segments_for
from proxy.emulator import create_app
from proxy.emulator.anthropic_cache import CacheRuleError
from proxy.emulator.anthropic_diagnostics import MessageMemory, diagnose, fingerprint, requested
from tests.support.servers import serve

SYSTEM = (
    "You answer questions about the billing policy, citing the section you rely on. " * 70
)  # ~1,400 tokens
CC = {"type": "ephemeral"}
TOOL = {
    "name": "lookup",
    "description": "Find a policy section",
    "input_schema": {"type": "object", "properties": {}},
}


def req(**extra) -> dict:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 8,
        "tools": [TOOL],
        "system": [{"type": "text", "text": SYSTEM, "cache_control": CC}],
        "messages": [{"role": "user", "content": "What is the refund window?"}],
        **extra,
    }


def fp(body: dict, cached: int = 100):
    return fingerprint(body, segments_for("anthropic", "/v1/messages", body), cached)


def test_requested_and_its_400s():
    assert requested(req()) == (False, None)
    assert requested(req(diagnostics=None)) == (False, None)
    assert requested(req(diagnostics={"previous_message_id": None})) == (True, None)
    assert requested(req(diagnostics={"previous_message_id": "msg_1"})) == (True, "msg_1")
    for bad in ("msg_1", {"previous_message_id": 7}):
        with pytest.raises(CacheRuleError, match="diagnostics"):
            requested(req(diagnostics=bad))


def test_diagnose_takes_the_first_difference_in_prompt_order():
    base = req()
    assert diagnose(None, fp(base)) == {"type": "previous_message_not_found"}
    assert diagnose(fp(base), fp(req(model="claude-opus-4-7", system="other"))) == {
        "type": "model_changed",
        "cache_missed_input_tokens": 100,
    }
    assert diagnose(fp(base), fp(req(speed="fast")))["type"] == "model_changed"
    assert diagnose(fp(base), fp(req(tools=[], system="other")))["type"] == "tools_changed"
    assert diagnose(fp(base), fp(req(system="other")))["type"] == "system_changed"
    assert (
        diagnose(fp(base), fp(req(messages=[{"role": "user", "content": "Another question"}])))["type"]
        == "messages_changed"
    )
    assert (
        diagnose(fp(base), fp(req(messages=[])))["type"] == "messages_changed"
    )  # shorter is not appended-to
    appended = req(
        messages=[
            base["messages"][0],
            {"role": "assistant", "content": "30 days"},
            {"role": "user", "content": "ok"},
        ]
    )
    assert diagnose(fp(base), fp(appended)) is None
    assert diagnose(fp(base), fp(req(tool_choice={"type": "any"}))) == {"type": "unavailable"}
    assert diagnose(fp(base), fp(req(thinking={"type": "enabled", "budget_tokens": 2048}))) == {
        "type": "unavailable"
    }
    moved = req(
        system=SYSTEM,
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": "What is the refund window?", "cache_control": CC}],
            }
        ],
    )
    assert diagnose(fp(base), fp(moved)) is None  # moving a marker or a spelling is no change


def test_memory_is_per_key_and_bounded():
    memory = MessageMemory(2)
    for i in range(3):
        memory.put(b"k", f"msg_{i}", fp(req()))
    assert len(memory) == 2 and memory.get(b"k", "msg_0") is None and memory.get(b"k", "msg_2") is not None
    assert memory.get(b"other", "msg_2") is None


@pytest.fixture(scope="module")
def url():
    with serve(create_app()) as base:
        yield base


def client(url: str, key: str = "sk-diag") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


@pytest.mark.e2e
def test_without_diagnostics_there_is_no_key_and_with_null_there_is_null(url):
    raw = client(url).messages.with_raw_response.create(**req()).http_response.json()
    assert "diagnostics" not in raw
    first = (
        client(url)
        .messages.with_raw_response.create(**req(), diagnostics={"previous_message_id": None})
        .http_response.json()
    )
    assert "diagnostics" in first and first["diagnostics"] is None


@pytest.mark.e2e
@pytest.mark.parametrize(
    "change, reason",
    [
        ({"model": "claude-opus-4-7"}, "model_changed"),
        ({"tools": [{**TOOL, "name": "search"}]}, "tools_changed"),
        ({"system": [{"type": "text", "text": "v2 " + SYSTEM, "cache_control": CC}]}, "system_changed"),
        (
            {"messages": [{"role": "user", "content": "What is the refund window for gifts?"}]},
            "messages_changed",
        ),
    ],
)
def test_each_divergence_names_its_reason_and_the_tokens_it_missed(url, change, reason):
    c = client(url, f"sk-diag-{reason}")
    first = c.messages.create(**req(), diagnostics={"previous_message_id": None})
    cached = first.usage.cache_creation_input_tokens + first.usage.cache_read_input_tokens
    assert cached > 1024
    second = c.messages.create(**req(**change), diagnostics={"previous_message_id": first.id})
    assert second.diagnostics.cache_miss_reason.type == reason
    assert second.diagnostics.cache_miss_reason.cache_missed_input_tokens == cached


@pytest.mark.e2e
def test_appending_is_no_divergence_and_other_params_are_unavailable(url):
    c = client(url, "sk-diag-loop")
    first = c.messages.create(**req(), diagnostics={"previous_message_id": None})
    grown = req(
        messages=[
            *req()["messages"],
            {"role": "assistant", "content": first.content[0].text},
            {"role": "user", "content": "And for gifts?"},
        ]
    )
    second = c.messages.create(**grown, diagnostics={"previous_message_id": first.id})
    assert second.diagnostics is None and second.usage.cache_read_input_tokens > 1024
    third = c.messages.create(
        **grown, tool_choice={"type": "any"}, diagnostics={"previous_message_id": second.id}
    )
    assert third.diagnostics.cache_miss_reason.type == "unavailable"


@pytest.mark.e2e
def test_unknown_ids_and_other_keys_ids_are_not_found(url):
    first = client(url, "sk-diag-owner").messages.create(**req(), diagnostics={"previous_message_id": None})
    never = client(url, "sk-diag-owner").messages.create(
        **req(), diagnostics={"previous_message_id": "msg_nope"}
    )
    assert never.diagnostics.cache_miss_reason.type == "previous_message_not_found"
    other = client(url, "sk-diag-stranger").messages.create(
        **req(), diagnostics={"previous_message_id": first.id}
    )
    assert other.diagnostics.cache_miss_reason.type == "previous_message_not_found"
    unopted = client(url, "sk-diag-owner").messages.create(**req())  # not opted in: not remembered
    later = client(url, "sk-diag-owner").messages.create(
        **req(), diagnostics={"previous_message_id": unopted.id}
    )
    assert later.diagnostics.cache_miss_reason.type == "previous_message_not_found"
    with pytest.raises(anthropic.BadRequestError, match="diagnostics"):
        client(url).messages.create(**req(), diagnostics={"previous_message_id": 3})


@pytest.mark.e2e
def test_stream_carries_diagnostics_in_message_start(url):
    c = client(url, "sk-diag-stream")
    first = c.messages.create(**req(), diagnostics={"previous_message_id": None})
    events = list(
        c.messages.create(
            **req(system="new system"), diagnostics={"previous_message_id": first.id}, stream=True
        )
    )
    assert events[0].type == "message_start"
    assert events[0].message.diagnostics.cache_miss_reason.type == "system_changed"
    with c.messages.stream(
        **req(system="new system"), diagnostics={"previous_message_id": events[0].message.id}
    ) as s:
        final = s.get_final_message()
    assert final.diagnostics is None  # the streamed request was remembered under its id
