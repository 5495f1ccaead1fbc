"""Anthropic compaction in the emulator: the billed pass in ``usage.iterations``, plain and streamed, via the SDK."""

from __future__ import annotations

import anthropic
import pytest

from analyzer.usage import from_anthropic, merge_anthropic_stream
from proxy.emulator import EmulatorConfig, create_app
from proxy.emulator.anthropic_cache import CacheRuleError, apply_anthropic_cache
from proxy.emulator.anthropic_compaction import maybe_compact, trigger_tokens
from proxy.emulator.provider_cache import ProviderCache, key_id
from tests.support.servers import serve

SYSTEM = "You are the support agent for the billing system; every policy follows. " * 100  # ~1,800 tokens
CC = {"type": "ephemeral"}


def edit(value: int | None = 1000, kind: str = "compact_20260112") -> dict:
    e: dict = {"type": kind}
    if value is not None:
        e["trigger"] = {"type": "input_tokens", "value": value}
    return {"edits": [e]}


def req(**extra) -> dict:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 12,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": CC}],
        "messages": [{"role": "user", "content": "Summarise our refund talk. " * 40}],
        **extra,
    }


def test_trigger_tokens():
    assert trigger_tokens(req(), 150_000) is None
    assert (
        trigger_tokens(req(context_management={"edits": [{"type": "clear_tool_uses_20250919"}]}), 150_000)
        is None
    )
    assert trigger_tokens(req(context_management=edit(None)), 150_000) == 150_000
    assert trigger_tokens(req(context_management=edit(2048)), 150_000) == 2048
    assert trigger_tokens(req(context_management=edit(5000, "compact_20260904")), 1) == 5000
    for bad in (
        {"type": "input_tokens", "value": 0},
        {"type": "turns", "value": 3},
        {"type": "input_tokens", "value": "9"},
    ):
        with pytest.raises(CacheRuleError, match="trigger"):
            trigger_tokens(
                req(context_management={"edits": [{"type": "compact_20260112", "trigger": bad}]}), 1
            )


def test_maybe_compact_only_at_the_trigger():
    store, config = ProviderCache(1000, lambda: 1.0), EmulatorConfig(clock=lambda: 1.0)
    body = req(context_management=edit(1000))
    first = apply_anthropic_cache(store, config, key_id("k"), "/v1/messages", body)
    assert maybe_compact(store, config, key_id("k"), "/v1/messages", body, None, first) is None
    assert (
        maybe_compact(store, config, key_id("k"), "/v1/messages", body, first.total_prompt_tokens + 1, first)
        is None
    )
    done = maybe_compact(store, config, key_id("k"), "/v1/messages", body, first.total_prompt_tokens, first)
    assert done is not None and done.compaction == first
    assert done.summary_tokens == first.total_prompt_tokens // 50
    assert (
        done.message.cache_read_input_tokens == first.cache_creation_input_tokens > 0
    )  # the system prefix, now cached


@pytest.fixture(scope="module")
def url():
    with serve(create_app(EmulatorConfig(compaction_trigger_tokens=3000))) as base:
        yield base


def client(url: str, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)


@pytest.mark.e2e
def test_plain_compaction_reports_both_passes_and_only_the_message_at_the_top(url):
    reference = (
        client(url, "sk-ref").messages.create(**req()).usage
    )  # the same prompt, no compaction, fresh cache
    u = (
        client(url, "sk-compaction")
        .beta.messages.create(**req(context_management=edit(1000)), betas=["compact-2026-01-12"])
        .usage
    )
    compaction, message = u.iterations
    assert (compaction.type, message.type) == ("compaction", "message")
    assert (
        compaction.input_tokens,
        compaction.cache_read_input_tokens,
        compaction.cache_creation_input_tokens,
    ) == (reference.input_tokens, reference.cache_read_input_tokens, reference.cache_creation_input_tokens)
    total = reference.input_tokens + reference.cache_read_input_tokens + reference.cache_creation_input_tokens
    assert compaction.output_tokens == total // 50
    assert (
        message.input_tokens,
        message.output_tokens,
        message.cache_read_input_tokens,
        message.cache_creation_input_tokens,
    ) == (u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens)
    assert (
        u.cache_read_input_tokens == reference.cache_creation_input_tokens
    )  # the final pass read the system prefix
    assert u.input_tokens < reference.input_tokens and u.output_tokens == 12
    billed = from_anthropic(u.model_dump())  # the proxy's parser adds the compaction pass, once
    assert (
        billed.input_tokens
        == total + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
    )
    assert billed.drift == ()


@pytest.mark.e2e
def test_below_the_trigger_nothing_changes(url):
    plain = client(url, "sk-below-a").messages.with_raw_response.create(**req()).http_response.json()
    below = (
        client(url, "sk-below-b")
        .beta.messages.with_raw_response.create(**req(context_management=edit(10**6)))
        .http_response.json()
    )
    assert "iterations" not in below["usage"] and below["usage"] == plain["usage"]
    default = (
        client(url, "sk-below-c").beta.messages.create(**req(context_management=edit(None))).usage
    )  # the config's 3000
    assert default.iterations is None
    bigger = req(context_management=edit(None), system=SYSTEM * 2)  # ~3,600 tokens: past the config's trigger
    assert [i.type for i in client(url, "sk-below-d").beta.messages.create(**bigger).usage.iterations] == [
        "compaction",
        "message",
    ]


@pytest.mark.e2e
def test_stream_puts_the_compaction_pass_in_message_start_and_the_message_in_message_delta(url):
    plain = client(url, "sk-stream-ref").beta.messages.create(**req(context_management=edit(1000))).usage
    events = list(
        client(url, "sk-stream").beta.messages.create(**req(context_management=edit(1000)), stream=True)
    )
    start = events[0].message.usage
    delta = next(e for e in events if e.type == "message_delta").usage
    assert [i.type for i in start.iterations] == ["compaction"]
    assert start.iterations[0].model_dump() == plain.iterations[0].model_dump()
    assert [i.type for i in delta.iterations] == ["message"]
    assert delta.iterations[0].model_dump() == plain.iterations[1].model_dump()
    assert (delta.input_tokens, delta.output_tokens) == (plain.input_tokens, plain.output_tokens)
    merged = merge_anthropic_stream(start.model_dump(), delta.model_dump())
    assert merged == from_anthropic(plain.model_dump())  # a stream bills what the plain answer bills
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == client(url, "sk-stream-ref").messages.create(**req()).content[0].text
