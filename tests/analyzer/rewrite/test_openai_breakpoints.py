"""analyzer.rewrite.openai_breakpoints (and the 5.6 parts of rewrite_request): GPT-5.6 markers
where the head ends and before the newest turn, the Responses instructions move, 12 h only where
priced, xAI / Mistral routing hints; the guarantees as hypothesis properties."""

from __future__ import annotations

import copy
import json

import orjson
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.cache_rules.openai import uses_breakpoints
from analyzer.pricing import PriceTable
from analyzer.rewrite import AGGRESSIVE, SAFE, HeadReturns, rewrite_request, write_12h_ratio
from analyzer.rewrite.cache_key import cache_key_for
from analyzer.rewrite.cli import rewrite_command
from analyzer.rewrite.movable import clear_cache
from analyzer.rewrite.openai_breakpoints import place_openai_breakpoints
from analyzer.rewrite.ttl import pays_for_12h
from analyzer.segments import openai_chat_segments, openai_responses_segments
from proxy.bench.gpt56_workload import agent_loop, codex

DEV = (
    "You are Forge, a coding agent. Read the repository before you edit; run the tests after. " * 120
)  # ~11 KB
MARK = {"mode": "explicit"}
TOOLS_CHAT = [
    {
        "function": {"description": "Run a command.", "name": "shell", "parameters": {"type": "object"}},
        "type": "function",
    }
]
TOOLS_RESP = [
    {"description": "Run a command.", "name": "shell", "parameters": {"type": "object"}, "type": "function"}
]  # keys sorted


def chat(model="gpt-5.6-sol", messages=None, **extra):
    return {
        "model": model,
        "tools": TOOLS_CHAT,
        "messages": messages
        or [{"role": "developer", "content": DEV}, {"role": "user", "content": "fix the failing test"}],
        **extra,
    }


def responses(model="gpt-5.6-sol", **extra):
    return {
        "model": model,
        "tools": TOOLS_RESP,
        "instructions": DEV,
        "input": [{"role": "user", "content": "fix the failing test"}],
        "store": False,
        **extra,
    }


def canonical(api: str, body: dict) -> list[bytes]:
    return [
        s.data
        for s in (openai_responses_segments if api == "openai-responses" else openai_chat_segments)(body)
    ]


def moved(body: dict) -> dict:
    """The documented instructions move, done by hand: what the model reads after it."""
    out = {k: v for k, v in body.items() if k != "instructions"}
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    out["input"] = [
        {"role": "developer", "content": [{"type": "input_text", "text": body["instructions"]}]},
        *items,
    ]
    return out


def markers(value, path="") -> list[str]:
    if isinstance(value, dict):
        return [path] * ("prompt_cache_breakpoint" in value) + [
            p for k, v in value.items() for p in markers(v, f"{path}.{k}")
        ]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in markers(v, f"{path}[{i}]")]
    return []


def ttls(value) -> list:
    """The ``ttl`` of every ``prompt_cache_breakpoint`` in ``value``."""
    if isinstance(value, dict):
        mark = value.get("prompt_cache_breakpoint")
        own = [mark.get("ttl")] if isinstance(mark, dict) else []
        return own + [t for v in value.values() for t in ttls(v)]
    if isinstance(value, list):
        return [t for v in value for t in ttls(v)]
    return []


# -- the codex pattern -------------------------------------------------------------------


def test_codex_chat_marks_the_end_of_the_developer_prompt():
    body = chat()
    out = rewrite_request("openai-chat", body, mode=SAFE, tenant="t")
    assert out.applied == ["prompt-cache-key", "add-openai-breakpoints"]
    assert out.body["messages"][0]["content"] == [
        {"type": "text", "text": DEV, "prompt_cache_breakpoint": MARK}
    ]
    assert (
        out.body["messages"][1] == body["messages"][1]
    )  # the newest turn keeps the implicit breakpoint only
    assert canonical("openai-chat", out.body) == canonical("openai-chat", body)
    assert "prompt_cache_options" not in out.body


def test_codex_responses_moves_string_instructions_into_a_marked_developer_item():
    out = rewrite_request("openai-responses", responses(), mode=SAFE, tenant="t")
    assert out.applied == ["prompt-cache-key", "add-openai-breakpoints", "instructions-as-developer"]
    assert "instructions" not in out.body
    assert out.body["input"][0] == {
        "role": "developer",
        "content": [{"type": "input_text", "text": DEV, "prompt_cache_breakpoint": MARK}],
    }
    assert canonical("openai-responses", out.body) == canonical("openai-responses", moved(responses()))
    # a string input becomes the same user item
    text = rewrite_request("openai-responses", responses(input="fix it"), mode=SAFE, tenant="t").body
    assert text["input"][1] == {"role": "user", "content": "fix it"}
    assert canonical("openai-responses", text) == canonical(
        "openai-responses", moved(responses(input="fix it"))
    )


def test_instructions_stay_where_a_later_request_could_carry_the_move_over():
    for extra in ({"store": True}, {"previous_response_id": "resp_1"}, {"conversation": "conv_1"}):
        body = {**responses(), **extra}
        out = rewrite_request("openai-responses", body, mode=SAFE, tenant="t")
        assert out.body["instructions"] == DEV and out.applied == ["prompt-cache-key"], extra
    stored = {k: v for k, v in responses().items() if k != "store"}  # store defaults to true
    assert rewrite_request("openai-responses", stored, mode=SAFE, tenant="t").applied == ["prompt-cache-key"]


def test_instructions_stay_where_the_api_would_treat_an_input_item_otherwise():
    # truncation "auto" drops input items from the beginning (instructions never), compaction
    # rewrites input items, and a prompt template puts its own content before the input: the
    # moved text would not be read as the instructions were
    for extra in (
        {"truncation": "auto"},
        {"context_management": [{"type": "compaction", "compact_threshold": 20000}]},
        {"prompt": {"id": "pmpt_1", "version": "2"}},
    ):
        out = rewrite_request("openai-responses", {**responses(), **extra}, mode=SAFE, tenant="t")
        assert out.body["instructions"] == DEV and "instructions-as-developer" not in out.applied, extra
    for extra in (
        {"truncation": "disabled"},
        {"truncation": None},
        {"context_management": None},
        {"prompt": None},
    ):
        out = rewrite_request("openai-responses", {**responses(), **extra}, mode=SAFE, tenant="t")
        assert "instructions" not in out.body and "instructions-as-developer" in out.applied, extra


def test_leading_developer_items_are_marked_and_instructions_left_alone():
    body = {
        **responses(),
        "store": True,
        "input": [{"role": "developer", "content": "House rules. " * 20}, {"role": "user", "content": "go"}],
    }
    out = rewrite_request("openai-responses", body, mode=SAFE, tenant="t").body
    assert out["instructions"] == DEV
    assert out["input"][0]["content"] == [
        {"type": "input_text", "text": "House rules. " * 20, "prompt_cache_breakpoint": MARK}
    ]


def test_a_short_head_gets_nothing():
    short = chat(messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    assert rewrite_request("openai-chat", short, mode=SAFE, tenant="t").applied == ["prompt-cache-key"]
    assert place_openai_breakpoints(
        "openai-responses", responses(instructions="Be brief."), model="gpt-5.6"
    ) == (None, [])


# -- the agent loop ----------------------------------------------------------------------


def test_agent_loop_marks_the_head_and_the_boundary_before_the_newest_turn():
    messages = [
        {"role": "system", "content": DEV},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    out = rewrite_request("openai-chat", chat(messages=messages), mode=SAFE, tenant="t").body
    assert markers(out) == [".messages[0].content[0]", ".messages[2].content[0]"]
    assert out["messages"][2]["content"] == [{"type": "text", "text": "a1", "prompt_cache_breakpoint": MARK}]


def test_the_boundary_walks_back_past_turns_that_cannot_carry_a_marker():
    calls = [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]
    messages = [
        {"role": "system", "content": DEV},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "ok 2"},
    ]
    out = rewrite_request("openai-chat", chat(messages=messages), mode=SAFE, tenant="t").body
    assert markers(out) == [
        ".messages[0].content[0]",
        ".messages[3].content[0]",
    ]  # the earlier tool result, not the tool calls
    items = [
        {"role": "developer", "content": DEV},
        {"role": "user", "content": "q1"},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "q2"},
    ]
    body = {"model": "gpt-5.6-terra", "input": items}
    out = rewrite_request("openai-responses", body, mode=SAFE, tenant="t").body
    assert markers(out) == [
        ".input[0].content[0]",
        ".input[3].output[0]",
    ]  # assistant output_text takes no marker
    assert canonical("openai-responses", out) == canonical("openai-responses", body)


def test_a_chat_file_part_carries_the_marker_at_the_end_of_its_message():
    # the SDK's Chat ``File`` part takes ``prompt_cache_breakpoint`` like text, image and audio parts:
    # a marker on the text before it would leave the file out of the cached prefix
    calls = [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]
    attached = {"type": "file", "file": {"file_id": "file-abc", "filename": "spec.pdf"}}
    messages = [
        {"role": "system", "content": DEV},
        {"role": "user", "content": [{"type": "text", "text": "see the spec"}, attached]},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    body = chat(messages=messages)
    out = rewrite_request("openai-chat", body, mode=SAFE, tenant="t").body
    assert markers(out) == [".messages[0].content[0]", ".messages[1].content[1]"]
    assert out["messages"][1]["content"][1] == {**attached, "prompt_cache_breakpoint": MARK}
    assert canonical("openai-chat", out) == canonical("openai-chat", body)


def test_the_workloads_agent_loop_is_marked_on_both_apis():
    for api in ("openai-chat", "openai-responses"):
        bodies = list(agent_loop(api, 4, volatile=False))
        outs = [rewrite_request(api, b, mode=SAFE, tenant="t") for b in bodies]
        assert all("add-openai-breakpoints" in o.applied for o in outs)
        assert len(markers(outs[-1].body)) == 2 and all(len(markers(o.body)) <= 3 for o in outs)


# -- what is never touched ----------------------------------------------------------------


def test_client_markers_and_options_are_never_touched():
    marked = chat(
        messages=[
            {
                "role": "developer",
                "content": [
                    {
                        "type": "text",
                        "text": DEV,
                        "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "30m"},
                    }
                ],
            },
            {"role": "user", "content": "hi"},
        ]
    )
    assert rewrite_request(
        "openai-chat", marked, mode=SAFE, tenant="t", head_returns=HeadReturns(1, 9), write_12h=2.5
    ).applied == ["prompt-cache-key"]
    for options in ({"mode": "explicit"}, {"ttl": "30m"}, None):
        body = chat(prompt_cache_options=options)
        out = rewrite_request("openai-chat", body, mode=SAFE, tenant="t").body
        assert out["prompt_cache_options"] == options and not markers(out)


def test_older_models_and_other_rules_never_get_a_marker():
    for model in ("gpt-5.5", "gpt-4o", "o4-mini", "azure-deployment", None):
        assert not markers(rewrite_request("openai-chat", chat(model=model), mode=SAFE, tenant="t").body)
        assert (
            "instructions-as-developer"
            not in rewrite_request("openai-responses", responses(model=model), mode=SAFE, tenant="t").applied
        )
    assert not markers(rewrite_request("openai-chat", chat(), mode=SAFE, tenant="t", rules="xai").body or {})
    assert not markers(rewrite_request("openai-chat", chat(), mode=SAFE, tenant="t", rules="mistral").body)
    # the model the proxy saw wins over the body's
    assert not markers(rewrite_request("openai-chat", chat(), mode=SAFE, model="gpt-5.5", tenant="t").body)


def test_azures_gpt35_turbo_is_an_older_model():  # Azure spells GPT-3.5 without the dot (analyzer.cache_rules.openai.version)
    for model in ("gpt-35-turbo", "gpt-35-turbo-16k", "azure/gpt-35-turbo-instruct"):
        assert not markers(rewrite_request("openai-chat", chat(model=model), mode=SAFE, tenant="t").body), (
            model
        )


# -- ttl 12h ---------------------------------------------------------------------------------


def test_12h_only_where_priced_and_where_it_pays():
    table = PriceTable.load()
    assert (
        write_12h_ratio(table.lookup("gpt-5.6-sol")) is None
        and write_12h_ratio(table.lookup("gpt-5.6-terra")) is None
    )
    assert write_12h_ratio(table.lookup("gpt-6.2-sol")) == 2.5 and write_12h_ratio(None) is None
    assert not pays_for_12h(HeadReturns(1, 5), None)  # 12h writes unpriced: never
    assert not pays_for_12h(HeadReturns(1, 0), 2.5) and not pays_for_12h(None, 2.5)
    assert not pays_for_12h(HeadReturns(1, 1), 2.5)  # 1 × 1.15 < 1 × 1.25
    assert pays_for_12h(HeadReturns(1, 2), 2.5)  # 2.3 > 1.25
    assert not pays_for_12h(HeadReturns(3, 3), 2.5) and pays_for_12h(
        HeadReturns(3, 4), 2.5
    )  # 3.45 < 3.75 < 4.6


def test_12h_goes_on_the_responses_head_marker_only():
    items = [
        {"role": "developer", "content": DEV},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]},
        {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "ok"},
    ]
    body = {"model": "gpt-6.2-sol", "input": items}
    out = rewrite_request(
        "openai-responses", body, mode=SAFE, tenant="t", head_returns=HeadReturns(1, 2), write_12h=2.5
    )
    assert out.applied[-2:] == ["add-openai-breakpoints", "ttl-12h"]
    assert out.body["input"][0]["content"][0]["prompt_cache_breakpoint"] == {"mode": "explicit", "ttl": "12h"}
    assert (
        out.body["input"][4]["output"][0]["prompt_cache_breakpoint"] == MARK
    )  # the boundary keeps the request's TTL
    moved_head = rewrite_request(
        "openai-responses",
        responses(model="gpt-6.2-sol"),
        mode=SAFE,
        tenant="t",
        head_returns=HeadReturns(1, 2),
        write_12h=2.5,
    )
    assert (
        moved_head.applied[-1] == "ttl-12h"
        and moved_head.body["input"][0]["content"][0]["prompt_cache_breakpoint"]["ttl"] == "12h"
    )
    unpriced = rewrite_request(
        "openai-responses",
        {**body, "model": "gpt-5.6-sol"},
        mode=SAFE,
        tenant="t",
        head_returns=HeadReturns(1, 9),
        write_12h=None,
    )
    assert "ttl-12h" not in unpriced.applied and "12h" not in orjson.dumps(unpriced.body).decode()


def test_chat_never_gets_12h_its_usage_has_no_ttl_split_to_price_it():
    out = rewrite_request(
        "openai-chat",
        chat(model="gpt-6.2-sol"),
        mode=SAFE,
        tenant="t",
        head_returns=HeadReturns(1, 9),
        write_12h=2.5,
    )
    assert "add-openai-breakpoints" in out.applied and "ttl-12h" not in out.applied
    assert out.body["messages"][0]["content"][0]["prompt_cache_breakpoint"] == MARK


# -- xAI and Mistral ---------------------------------------------------------------------------


def test_xai_and_mistral_routing_hints():
    body = chat(model="grok-4")
    xai = rewrite_request("openai-chat", body, mode=SAFE, tenant="t", rules="xai")
    assert xai.applied == ["xai-conv-id"] and xai.body is None  # header only: the body goes byte for byte
    assert xai.headers == {"x-grok-conv-id": cache_key_for("t", "openai-chat", body)}
    assert (
        rewrite_request(
            "openai-chat", body, mode=SAFE, tenant="t", rules="xai", headers={"x-grok-conv-id": "mine"}
        ).headers
        == {}
    )
    resp = rewrite_request("openai-responses", responses(model="grok-4"), mode=SAFE, tenant="t", rules="xai")
    assert (
        resp.applied == ["prompt-cache-key"]
        and resp.headers == {}
        and resp.body["prompt_cache_key"].startswith("pg-")
    )
    mistral = rewrite_request(
        "openai-chat", chat(model="mistral-large-latest"), mode=SAFE, tenant="t", rules="mistral"
    )
    assert mistral.applied == ["prompt-cache-key"] and mistral.headers == {}
    mine = rewrite_request(
        "openai-chat",
        chat(model="mistral-large", prompt_cache_key="k"),
        mode=SAFE,
        tenant="t",
        rules="mistral",
    )
    assert mine.body is None and mine.applied == []


# -- the CLI -----------------------------------------------------------------------------------


def test_the_cli_covers_the_codex_pattern_and_the_agent_loop(tmp_path):
    runner = CliRunner()
    for api in ("openai-chat", "openai-responses"):
        for name, body in (
            ("codex", next(codex(api, 1))),
            ("agent", list(agent_loop(api, 3, volatile=False))[-1]),
        ):
            path = tmp_path / f"{name}-{api}.json"
            path.write_text(json.dumps(body))
            result = runner.invoke(rewrite_command, [str(path)])
            assert result.exit_code == 0, result.output
            assert "add-openai-breakpoints" in result.stderr and "(model: gpt-5.6-sol)" in result.stderr
            assert markers(json.loads(result.stdout))
            older = runner.invoke(rewrite_command, [str(path), "--model", "gpt-5.5"])
            assert (
                older.exit_code == 0
                and not markers(json.loads(older.stdout))
                and "(model: gpt-5.5)" in older.stderr
            )
    xai = runner.invoke(rewrite_command, [str(tmp_path / "codex-openai-chat.json"), "--rules", "xai"])
    assert xai.exit_code == 0 and "header x-grok-conv-id: pg-" in xai.stderr
    assert (
        runner.invoke(
            rewrite_command, [str(tmp_path / "codex-openai-chat.json"), "--rules", "anthropic"]
        ).exit_code
        == 2
    )


# -- the guarantees, as properties --------------------------------------------------------------

NEW_MODELS = [
    "gpt-5.6-sol",
    "gpt-5.6",
    "gpt-5.7-luna",
    "gpt-6",
    "openai/gpt-6.2-sol",
    "GPT-5.6-terra",
    "gpt-5.56",
]
OLD_MODELS = [
    "gpt-5.5",
    "gpt-5",
    "gpt-4o",
    "gpt-4.1-mini",
    "o3",
    "o4-mini",
    "chatgpt-4o-latest",
    "gpt-oss-120b",
    "my-deployment",
    "azure/gpt-5.5-pro",
    "gpt-5.5.6",
]
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@st.composite
def part(draw, api):
    kinds = ["text", "image_url"] if api == "openai-chat" else ["input_text", "input_image"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("text", "input_text"):
        return {"type": kind, "text": draw(st.one_of(TEXT, st.just(DEV[:2000])))}
    return (
        {"type": kind, "image_url": {"url": "https://x/y.png"}}
        if api == "openai-chat"
        else {"type": kind, "image_url": "https://x/y.png"}
    )


@st.composite
def content(draw, api, role):
    if draw(st.booleans()) or (api == "openai-responses" and role == "assistant"):
        text = draw(st.sampled_from([DEV, DEV[:3000], "", "ok"]) if draw(st.booleans()) else TEXT)
        if api == "openai-responses" and role == "assistant" and draw(st.booleans()):
            return [{"type": "output_text", "text": text}]
        return text
    return draw(st.lists(part(api), min_size=1, max_size=3))


@st.composite
def bodies(draw):
    api = draw(st.sampled_from(["openai-chat", "openai-responses"]))
    kind = draw(st.sampled_from(["new", "new", "old", "any"]))
    model = draw(
        st.sampled_from(NEW_MODELS)
        if kind == "new"
        else st.sampled_from(OLD_MODELS)
        if kind == "old"
        else st.text(max_size=12)
    )
    head = draw(st.sampled_from([[], [], ["developer"], ["system"], ["system", "developer"]]))
    roles = draw(st.lists(st.sampled_from(["user", "assistant", "tool"]), min_size=1, max_size=6))
    items = []
    for role in head + roles:
        if role == "tool":
            if api == "openai-chat":
                items.append({"role": "tool", "tool_call_id": "c1", "content": draw(content(api, role))})
            else:
                output = draw(st.one_of(TEXT, st.lists(part(api), min_size=1, max_size=2)))
                items.append({"type": "function_call_output", "call_id": "c1", "output": output})
        elif role == "assistant" and draw(st.booleans()):
            if api == "openai-chat":
                items.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
                        ],
                    }
                )
            else:
                items.append({"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"})
        else:
            items.append({"role": role, "content": draw(content(api, role))})
    body: dict = {"model": model, "tools": TOOLS_CHAT if api == "openai-chat" else TOOLS_RESP}
    if api == "openai-chat":
        body["messages"] = items
    else:
        instructions = draw(st.sampled_from([DEV, DEV, DEV, "Be brief.", "", None]))
        if instructions is not None:
            body["instructions"] = instructions
        body["input"] = items if len(items) > 1 or draw(st.booleans()) else "just a question"
        store = draw(st.sampled_from([False, False, True, None]))  # None: left out (the API's default, true)
        if store is not None:
            body["store"] = store
        for key, value in (("previous_response_id", "resp_1"), ("conversation", "conv_1")):
            if draw(st.sampled_from([False, False, False, False, True])):
                body[key] = value
    if (
        uses_breakpoints(model) and draw(st.integers(0, 5)) == 0
    ):  # a client's own options (an older model would 400 on them)
        body["prompt_cache_options"] = {"ttl": "30m"}
    return api, body


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bodies(),
    st.sampled_from([SAFE, AGGRESSIVE]),
    st.sampled_from([None, HeadReturns(1, 3)]),
    st.sampled_from([None, 2.5]),
)
def test_properties(req, mode, reuse, write_12h):
    api, body = req
    original = copy.deepcopy(body)
    first = rewrite_request(api, body, mode=mode, tenant="t", head_returns=reuse, write_12h=write_12h)
    assert body == original  # never mutated
    clear_cache()
    again = rewrite_request(
        api, copy.deepcopy(body), mode=mode, tenant="t", head_returns=reuse, write_12h=write_12h
    )
    assert (
        orjson.dumps(again.body) == orjson.dumps(first.body) and again.applied == first.applied
    )  # deterministic
    out = first.body if first.body is not None else body
    assert (
        rewrite_request(api, out, mode=mode, tenant="t", head_returns=reuse, write_12h=write_12h).body is None
    )  # idempotent
    dumped = orjson.dumps(out).decode()
    if not uses_breakpoints(body["model"]):  # older models: a 400 if either key appears
        assert "prompt_cache_breakpoint" not in dumped and "prompt_cache_options" not in dumped
        assert not {"add-openai-breakpoints", "instructions-as-developer", "ttl-12h"} & set(first.applied)
    if "prompt_cache_options" in body:
        assert out["prompt_cache_options"] == body["prompt_cache_options"] and not markers(out)
    assert len(markers(out)) <= 3  # implicit mode writes the latest 3 explicit ones and the implicit one
    if "12h" in ttls(out):  # a marker's own ttl (the text may say "12h" too)
        assert (
            api == "openai-responses"
            and write_12h is not None
            and reuse is not None
            and "ttl-12h" in first.applied
        )
    if mode == SAFE:  # what the model reads is unchanged, but for the documented instructions move
        expected = moved(body) if "instructions-as-developer" in first.applied else body
        assert canonical(api, out) == canonical(api, expected)
