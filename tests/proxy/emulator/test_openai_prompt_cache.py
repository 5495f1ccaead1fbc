"""OpenAI's two caching contracts through a real uvicorn, driven by the official openai SDK:
GPT-5.6+ breakpoints (Chat Completions and Responses, plain and streaming) and the 128-step rules before."""

from __future__ import annotations

import openai
import pytest

from analyzer.segments import segments_for
from analyzer.tokens import estimate_tokens
from analyzer.usage import from_openai_chat, from_openai_responses
from proxy.emulator import create_app
from tests.support.servers import serve

pytestmark = pytest.mark.e2e

NEW = "gpt-5.6-terra"
DEV = (
    "You are a coding agent. Follow the repository conventions; run the tests before you answer. " * 390
)  # ~9k tokens
MARK = {"mode": "explicit"}
MARK_12H = {"mode": "explicit", "ttl": "12h"}


@pytest.fixture(scope="module")
def url():
    with serve(create_app()) as base:
        yield base


def client(url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)


def developer(mark: dict | None = None, kind: str = "text") -> dict:
    part = {"type": kind, "text": DEV, **({"prompt_cache_breakpoint": mark} if mark else {})}
    return {"role": "developer", "content": [part]}


def through(route: str, body: dict, i: int) -> int:
    """Tokens of the first i+1 segments of ``body``, computed apart from the emulator."""
    return estimate_tokens(sum(len(s.data) for s in segments_for("openai", route, body)[: i + 1]))


CHAT = "/v1/chat/completions"
RESP = "/v1/responses"


def test_codex_pattern_on_chat_reads_nothing_without_a_marker_and_99_percent_with_one(url):
    c = client(url, "sk-codex-chat")
    for i in range(3):
        u = c.chat.completions.create(
            model=NEW, messages=[developer(), {"role": "user", "content": f"task {i}"}]
        ).usage
        assert u.prompt_tokens > 9000 and u.prompt_tokens_details.cached_tokens == 0
        assert (
            u.prompt_tokens_details.cache_write_tokens == u.prompt_tokens
        )  # the implicit one, at the end, every time
    rates = []
    for i in range(4):
        messages = [developer(MARK), {"role": "user", "content": f"task number {i}"}]
        u = c.chat.completions.create(model=NEW, messages=messages).usage
        if i == 0:
            assert u.prompt_tokens_details.cached_tokens == 0
            continue
        assert u.prompt_tokens_details.cached_tokens == through(CHAT, {"messages": messages}, 0)
        assert (
            u.prompt_tokens_details.cache_write_tokens
            == u.prompt_tokens - u.prompt_tokens_details.cached_tokens
        )
        rates.append(u.prompt_tokens_details.cached_tokens / u.prompt_tokens)
    assert min(rates) > 0.99


def test_codex_pattern_on_responses_reads_nothing_without_a_marker_and_99_percent_with_one(url):
    c = client(url, "sk-codex-responses")
    for i in range(2):
        u = c.responses.create(
            model=NEW, input=[developer(None, "input_text"), {"role": "user", "content": f"task {i}"}]
        ).usage
        assert u.input_tokens > 9000 and u.input_tokens_details.cached_tokens == 0
    rates = []
    for i in range(3):
        items = [developer(MARK, "input_text"), {"role": "user", "content": f"task number {i}"}]
        u = c.responses.create(model=NEW, input=items, store=False).usage
        if i:
            assert u.input_tokens_details.cached_tokens == through(RESP, {"input": items}, 0)
            rates.append(u.input_tokens_details.cached_tokens / u.input_tokens)
    assert min(rates) > 0.99


def test_chat_stream_reports_writes_in_the_usage_chunk(url):
    c = client(url, "sk-chat-stream")
    messages = [developer(MARK), {"role": "user", "content": "first"}]
    c.chat.completions.create(model=NEW, messages=messages)
    chunks = list(
        c.chat.completions.create(
            model=NEW,
            messages=[developer(MARK), {"role": "user", "content": "second"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and all(ch.usage is None for ch in chunks[:-1])
    assert usage.prompt_tokens_details.cached_tokens == through(CHAT, {"messages": messages}, 0)
    assert 0 < usage.prompt_tokens_details.cache_write_tokens < 20
    parsed = from_openai_chat(usage.model_dump())  # the proxy's parser reads it without drift
    assert parsed.drift == () and parsed.cache_write_tokens == usage.prompt_tokens_details.cache_write_tokens


def test_agent_loop_on_responses_reads_the_previous_turns_implicit_breakpoint(url):
    c = client(url, "sk-agent-loop")
    items = [{"role": "developer", "content": DEV}, {"role": "user", "content": "fix the failing test"}]
    first = c.responses.create(model=NEW, input=items).usage
    assert (
        first.input_tokens_details.cached_tokens == 0
        and first.input_tokens_details.cache_write_tokens == first.input_tokens
    )
    for turn in range(3):
        before = list(items)
        items += [
            {"role": "assistant", "content": f"step {turn} done"},
            {"role": "user", "content": f"continue {turn}"},
        ]
        u = c.responses.create(model=NEW, input=items).usage
        assert u.input_tokens_details.cached_tokens == through(RESP, {"input": before}, len(before) - 1)
        assert (
            u.input_tokens_details.cache_write_tokens == u.input_tokens - u.input_tokens_details.cached_tokens
        )
        assert (
            u.input_tokens_details.cache_write_tokens_details.ttl_30m_tokens
            == u.input_tokens_details.cache_write_tokens
        )


def test_a_12h_marker_shows_in_ttl_12h_tokens_plain_and_streamed(url):
    c = client(url, "sk-12h")
    items = [developer(MARK_12H, "input_text"), {"role": "user", "content": "plan the release"}]
    u = c.responses.create(model=NEW, input=items).usage
    details = u.input_tokens_details.cache_write_tokens_details
    assert details.ttl_12h_tokens == through(RESP, {"input": items}, 0)
    assert details.ttl_30m_tokens == u.input_tokens - details.ttl_12h_tokens > 0
    events = list(
        c.responses.create(
            model=NEW, input=[items[0], {"role": "user", "content": "plan again"}], stream=True
        )
    )
    assert events[-1].type == "response.completed"
    streamed = events[-1].response.usage
    assert streamed.input_tokens_details.cached_tokens == details.ttl_12h_tokens
    assert streamed.input_tokens_details.cache_write_tokens_details.ttl_12h_tokens == 0  # already written
    parsed = from_openai_responses(u.model_dump())
    assert parsed.drift == () and parsed.cache_write_12h_tokens == details.ttl_12h_tokens
    ttl_option = (
        client(url, "sk-12h-option")
        .responses.create(
            model=NEW,
            input=[developer(None, "input_text"), {"role": "user", "content": "x"}],
            prompt_cache_options={"ttl": "12h"},
        )
        .usage
    )
    assert (
        ttl_option.input_tokens_details.cache_write_tokens_details.ttl_12h_tokens == ttl_option.input_tokens
    )


def test_explicit_mode_without_markers_caches_nothing(url):
    c = client(url, "sk-explicit")
    messages = [developer(), {"role": "user", "content": "same question"}]
    for _ in range(2):
        u = c.chat.completions.create(
            model=NEW, messages=messages, extra_body={"prompt_cache_options": {"mode": "explicit"}}
        ).usage
        assert (u.prompt_tokens_details.cached_tokens, u.prompt_tokens_details.cache_write_tokens) == (0, 0)
    u = c.chat.completions.create(
        model=NEW, messages=messages
    ).usage  # implicit mode: written now, read next time
    assert (
        u.prompt_tokens_details.cached_tokens == 0
        and u.prompt_tokens_details.cache_write_tokens == u.prompt_tokens
    )


@pytest.mark.parametrize("mode, written", [("implicit", [2, 3, 4]), ("explicit", [1, 2, 3, 4])])
def test_more_than_four_markers_write_only_the_latest(url, mode, written):
    c = client(url, f"sk-five-markers-{mode}")
    parts = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"document {i}: " + DEV[:6000], "prompt_cache_breakpoint": MARK}
            ],
        }
        for i in range(5)
    ]
    messages = parts + [{"role": "user", "content": "compare them"}]
    u = c.chat.completions.create(model=NEW, messages=messages, prompt_cache_options={"mode": mode}).usage
    last = 5 if mode == "implicit" else 4
    assert u.prompt_tokens_details.cache_write_tokens == through(CHAT, {"messages": messages}, last)
    for i in range(
        5
    ):  # a probe ending after document i (markers dropped, implicit mode) reads the longest one written
        probe = [{"role": "user", "content": p["content"][0]["text"]} for p in parts[: i + 1]] + [
            {"role": "user", "content": f"only up to {i}"}
        ]
        got = c.chat.completions.create(model=NEW, messages=probe).usage.prompt_tokens_details.cached_tokens
        below = [w for w in written if w <= i]
        assert got == (through(CHAT, {"messages": probe}, max(below)) if below else 0), i


def test_validation_answers_400_in_openais_shape(url):
    c = client(url, "sk-validation")
    cases = [
        (
            lambda: c.chat.completions.create(
                model=NEW,
                messages=[{"role": "user", "content": "x"}],
                extra_body={"prompt_cache_options": {"ttl": "12h"}},
            ),
            "prompt_cache_options.ttl",
            "invalid_value",
        ),
        (
            lambda: c.responses.create(
                model=NEW, input="x", extra_body={"prompt_cache_options": {"ttl": "24h"}}
            ),
            "prompt_cache_options.ttl",
            "invalid_value",
        ),
        (
            lambda: c.responses.create(
                model=NEW, input="x", extra_body={"prompt_cache_options": {"mode": "auto"}}
            ),
            "prompt_cache_options.mode",
            "invalid_value",
        ),
        (
            lambda: c.chat.completions.create(
                model=NEW,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "text",
                                "text": "x",
                                "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "1h"},
                            }
                        ],
                    }
                ],
            ),
            "messages[0].content[0].prompt_cache_breakpoint.ttl",
            "invalid_value",
        ),
        (
            lambda: c.chat.completions.create(
                model="gpt-4o", messages=[developer(MARK), {"role": "user", "content": "x"}]
            ),
            "messages[0].content[0].prompt_cache_breakpoint",
            "unsupported_parameter",
        ),
        (
            lambda: c.responses.create(model="gpt-5.5", input="x", prompt_cache_options={"mode": "implicit"}),
            "prompt_cache_options",
            "unsupported_parameter",
        ),
    ]
    for call, param, code in cases:
        with pytest.raises(openai.BadRequestError) as err:
            call()
        assert err.value.status_code == 400
        assert (err.value.body["param"], err.value.body["code"], err.value.body["type"]) == (
            param,
            code,
            "invalid_request_error",
        )


def test_gpt_4o_keeps_the_128_step_rules_and_its_usage_shape(url):
    c = client(url, "sk-gpt4o")
    messages = [{"role": "developer", "content": DEV}, {"role": "user", "content": "question one"}]
    c.chat.completions.create(model="gpt-4o", messages=messages)
    raw = c.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[messages[0], {"role": "user", "content": "two"}]
    )
    details = raw.http_response.json()["usage"]["prompt_tokens_details"]
    assert set(details) == {"cached_tokens", "audio_tokens"}  # no cache_write_tokens before 5.6
    assert details["cached_tokens"] >= 1024 and details["cached_tokens"] % 128 == 0
    assert details["cached_tokens"] != through(
        CHAT, {"messages": messages}, 0
    )  # a block boundary, not the message's end
    r = c.responses.create(model="gpt-4o", instructions=DEV, input="one").usage
    r2 = c.responses.create(model="gpt-4o", instructions=DEV, input="two").usage
    assert r.input_tokens_details.cached_tokens == 0 and r2.input_tokens_details.cached_tokens % 128 == 0
    assert r2.input_tokens_details.cached_tokens >= 1024
