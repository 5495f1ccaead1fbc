"""``POST /v1/responses/compact``: a CompactedResponse whose usage runs the caching rules, via the openai SDK."""

from __future__ import annotations

import httpx
import openai
import pytest

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from analyzer.usage import from_openai_responses
from proxy.emulator import create_app
from proxy.emulator.openai_compact import user_messages
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

NEW = "gpt-5.6-terra"
DEV = "Keep the migration plan, the test matrix and every decision made so far. " * 120  # ~2,200 tokens
ITEMS = [
    {"role": "developer", "content": DEV},
    {"role": "user", "content": "migrate the billing tables"},
    {"role": "assistant", "content": "done with step one"},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "now step two", "prompt_cache_breakpoint": {"mode": "explicit"}}
        ],
    },
]


@pytest.fixture(scope="module")
def url():
    with serve(create_app()) as base:
        yield base


def client(url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)


def prompt_tokens(items: list) -> int:
    return estimate_tokens(
        sum(len(s.data) for s in segments_for("openai", "/v1/responses/compact", {"input": items}))
    )


def test_user_messages_keep_only_user_items_without_markers():
    got = user_messages({"input": ITEMS})
    assert [m["content"] for m in got] == [
        [{"type": "input_text", "text": "migrate the billing tables"}],
        [{"type": "input_text", "text": "now step two"}],
    ]
    assert user_messages({"input": "just this"})[0]["content"] == [
        {"type": "input_text", "text": "just this"}
    ]
    assert user_messages({"input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}) == []


def test_compact_answers_a_compacted_response_with_billed_cache_usage(url):
    c = client(url, "sk-compact")
    first = c.responses.compact(model=NEW, input=ITEMS)
    assert first.object == "response.compaction" and first.id.startswith("resp_")
    assert [o.type for o in first.output] == ["message", "message", "compaction"]
    assert [o.role for o in first.output[:2]] == ["user", "user"]
    assert first.output[-1].encrypted_content and first.output[-1].id.startswith("cmp_")
    u = first.usage
    assert (
        u.input_tokens == prompt_tokens(ITEMS)
        and u.output_tokens == 16
        and u.total_tokens == u.input_tokens + 16
    )
    assert (u.input_tokens_details.cached_tokens, u.input_tokens_details.cache_write_tokens) == (
        0,
        u.input_tokens,
    )
    again = c.responses.compact(
        model=NEW, input=ITEMS
    ).usage  # the implicit breakpoint at the end is read back whole
    assert again.input_tokens_details.cached_tokens == again.input_tokens
    assert again.input_tokens_details.cache_write_tokens == 0
    assert from_openai_responses(again.model_dump()).drift == ()


def test_compact_shares_entries_with_responses_and_refuses_what_responses_refuses(url):
    c = client(url, "sk-compact-shared")
    c.responses.create(model=NEW, input=ITEMS[:2])
    u = c.responses.compact(model=NEW, input=ITEMS).usage
    assert u.input_tokens_details.cached_tokens == prompt_tokens(ITEMS[:2])
    with pytest.raises(openai.BadRequestError) as err:
        c.responses.compact(model=NEW, input=ITEMS, extra_body={"prompt_cache_options": {"ttl": "12h"}})
    assert (err.value.body["param"], err.value.body["code"]) == ("prompt_cache_options.ttl", "invalid_value")
    with pytest.raises(openai.BadRequestError) as err:
        c.responses.compact(model="gpt-4o", input=ITEMS)  # a marker on an older model
    assert err.value.body["code"] == "unsupported_parameter"


def test_older_models_compact_with_the_128_step_rules(url):
    c = client(url, "sk-compact-old")
    items = [i for i in ITEMS if isinstance(i["content"], str)]
    c.responses.compact(model="gpt-4o", input=items)
    raw = httpx.post(
        f"{url}/openai/v1/responses/compact",
        json={"model": "gpt-4o", "input": items},
        headers={"authorization": "Bearer sk-compact-old"},
    )
    details = raw.json()["usage"]["input_tokens_details"]
    assert raw.status_code == 200 and set(details) == {"cached_tokens"}
    assert details["cached_tokens"] >= 1024 and details["cached_tokens"] % 128 == 0
    missing = httpx.post(f"{url}/v1/responses/compact", json={"input": items})
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "model"
