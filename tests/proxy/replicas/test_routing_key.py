"""The routing key: an app's head when it is long, the head plus the chat's first turn when not."""

from __future__ import annotations

from analyzer.prefix import chain, root_hash
from analyzer.segments import openai_chat_segments
from proxy.replicas.routing_key import MIN_HEAD_TOKENS, body_key, head_length, key_length, routing_key

LONG_SYSTEM = "You are the billing assistant of Example Corp. " * 200  # ~2,400 tokens
SHORT_SYSTEM = "You are a helpful assistant."


def body(system: str | None, *turns: str, model: str = "m", tools: bool = False) -> dict:
    messages = [{"role": "system", "content": system}] if system is not None else []
    for i, text in enumerate(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    out: dict = {"model": model, "messages": messages}
    if tools:
        out["tools"] = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    return out


def key(b: dict) -> bytes | None:
    return body_key("openai", "/v1/chat/completions", b, "pool")


def test_a_long_head_is_the_key_whatever_the_conversation():
    first = key(body(LONG_SYSTEM, "where is my invoice?"))
    assert first is not None
    assert key(body(LONG_SYSTEM, "cancel my plan", "done", "thanks")) == first
    segments = openai_chat_segments(body(LONG_SYSTEM, "hi"))
    hashed = chain(segments, root_hash("pool", "m"))
    assert first == hashed.hashes[head_length(segments) - 1]
    assert hashed.tokens_at(head_length(segments)) >= MIN_HEAD_TOKENS


def test_tools_are_part_of_the_head():
    assert key(body(LONG_SYSTEM, "hi", tools=True)) != key(body(LONG_SYSTEM, "hi"))
    assert head_length(openai_chat_segments(body(LONG_SYSTEM, "hi", tools=True))) == 2


def test_a_short_head_keys_each_chat_by_its_first_turn_for_all_its_turns():
    one = key(body(SHORT_SYSTEM, "plan a trip to Lisbon"))
    assert key(body(SHORT_SYSTEM, "plan a trip to Lisbon", "Day 1: ...", "and day 2?")) == one
    assert key(body(SHORT_SYSTEM, "write a haiku")) != one


def test_no_system_prompt_keys_by_the_first_message():
    assert key(body(None, "hello", "hi", "more")) == key(body(None, "hello"))
    assert key(body(None, "hello")) != key(body(None, "bye"))


def test_the_model_and_the_upstream_are_part_of_the_key():
    b = body(LONG_SYSTEM, "hi")
    assert key(b) != key(body(LONG_SYSTEM, "hi", model="other"))
    assert body_key("openai", "/v1/chat/completions", b, "pool-a") != key(b)


def test_no_chain_no_key():
    assert routing_key([], None) is None
    assert key({"model": "m", "messages": []}) is None
    assert key({"model": "m"}) is None


def test_the_threshold_decides_between_head_and_first_turn():
    segments = openai_chat_segments(body(SHORT_SYSTEM, "a", "b", "c"))
    hashed = chain(segments, b"")
    assert key_length(segments, hashed) == 2
    assert key_length(segments, hashed, min_head_tokens=1) == 1
